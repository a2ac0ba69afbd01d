package raftlog

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"go.etcd.io/raft/v3"
)

// memberID logs a raft id as FormatID prints it (hex, as raft's own
// messages do), and memberIDs a list of them.
type (
	memberID  uint64
	memberIDs []uint64
)

// LogValue implements slog.LogValuer.
func (id memberID) LogValue() slog.Value { return slog.StringValue(FormatID(uint64(id))) }

// LogValue implements slog.LogValuer.
func (ids memberIDs) LogValue() slog.Value {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = FormatID(id)
	}
	return slog.StringValue("[" + strings.Join(s, " ") + "]")
}

// raftLogger adapts a *slog.Logger to raft.Logger. raft's Info messages
// (elections, votes, configuration switches) go to DEBUG: the node logs a
// leader change and every applied configuration change itself, at INFO.
// Fatal is turned into a panic: only cmd may exit the process.
type raftLogger struct {
	l *slog.Logger
}

var _ raft.Logger = raftLogger{}

func (r raftLogger) log(level slog.Level, msg string) {
	if !r.l.Enabled(context.Background(), level) {
		return
	}
	r.l.Log(context.Background(), level, msg, "component", "raft")
}

func (r raftLogger) Debug(v ...any) { r.log(slog.LevelDebug, fmt.Sprint(v...)) }
func (r raftLogger) Debugf(format string, v ...any) {
	r.log(slog.LevelDebug, fmt.Sprintf(format, v...))
}
func (r raftLogger) Info(v ...any)                 { r.log(slog.LevelDebug, fmt.Sprint(v...)) }
func (r raftLogger) Infof(format string, v ...any) { r.log(slog.LevelDebug, fmt.Sprintf(format, v...)) }
func (r raftLogger) Warning(v ...any)              { r.log(slog.LevelWarn, fmt.Sprint(v...)) }
func (r raftLogger) Warningf(format string, v ...any) {
	r.log(slog.LevelWarn, fmt.Sprintf(format, v...))
}
func (r raftLogger) Error(v ...any) { r.log(slog.LevelError, fmt.Sprint(v...)) }
func (r raftLogger) Errorf(format string, v ...any) {
	r.log(slog.LevelError, fmt.Sprintf(format, v...))
}
func (r raftLogger) Fatal(v ...any)                 { r.Panic(v...) }
func (r raftLogger) Fatalf(format string, v ...any) { r.Panicf(format, v...) }
func (r raftLogger) Panic(v ...any) {
	msg := fmt.Sprint(v...)
	r.log(slog.LevelError, msg)
	panic(msg)
}
func (r raftLogger) Panicf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	r.log(slog.LevelError, msg)
	panic(msg)
}
