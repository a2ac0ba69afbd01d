// Package diskspace measures the free space of a filesystem, for the
// member's NOSPACE alarm.
//
// It measures only on unix; elsewhere Free always fails, and the alarm is
// raised only by writes that fail for lack of space.
package diskspace
