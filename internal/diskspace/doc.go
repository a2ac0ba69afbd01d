// Package diskspace measures the free space of a filesystem, for the
// member's NOSPACE alarm.
package diskspace
