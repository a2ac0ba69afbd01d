package wire

import (
	"fmt"
	"net/netip"
)

// ErrorCode is the code of an ERROR response (section 9 of the v4 spec,
// 8 of v5's).
type ErrorCode int32

// The error codes.
const (
	CodeServer          ErrorCode = 0x0000
	CodeProtocol        ErrorCode = 0x000A
	CodeAuthentication  ErrorCode = 0x0100
	CodeUnavailable     ErrorCode = 0x1000
	CodeOverloaded      ErrorCode = 0x1001
	CodeIsBootstrapping ErrorCode = 0x1002
	CodeTruncate        ErrorCode = 0x1003
	CodeWriteTimeout    ErrorCode = 0x1100
	CodeReadTimeout     ErrorCode = 0x1200
	CodeReadFailure     ErrorCode = 0x1300
	CodeFunctionFailure ErrorCode = 0x1400
	CodeWriteFailure    ErrorCode = 0x1500
	CodeCDCWriteFailure ErrorCode = 0x1600
	CodeCASWriteUnknown ErrorCode = 0x1700
	CodeSyntax          ErrorCode = 0x2000
	CodeUnauthorized    ErrorCode = 0x2100
	CodeInvalid         ErrorCode = 0x2200
	CodeConfig          ErrorCode = 0x2300
	CodeAlreadyExists   ErrorCode = 0x2400
	CodeUnprepared      ErrorCode = 0x2500
)

// Error is an ERROR response: a code, a message and, for some codes, the
// extra body Detail carries.
type Error struct {
	Code    ErrorCode
	Message string
	Detail  ErrorDetail // nil for codes with no extra body
}

// Opcode returns OpError.
func (*Error) Opcode() Opcode { return OpError }

// AppendBody appends the code, the message and the detail.
func (m *Error) AppendBody(b []byte, v Version) []byte {
	b = AppendString(AppendInt(b, int32(m.Code)), m.Message)
	if m.Detail != nil {
		b = m.Detail.appendDetail(b, v)
	}
	return b
}

// Error makes an *Error an error.
func (m *Error) Error() string { return fmt.Sprintf("cql error %#04x: %s", int32(m.Code), m.Message) }

// ErrorDetail is the extra body of some error codes: one of the *Info
// types of this package, matched to the code by the caller.
type ErrorDetail interface {
	appendDetail(b []byte, v Version) []byte
}

// UnavailableInfo is the detail of CodeUnavailable.
type UnavailableInfo struct {
	Consistency     Consistency
	Required, Alive int32
}

// WriteTimeoutInfo is the detail of CodeWriteTimeout.
type WriteTimeoutInfo struct {
	Consistency        Consistency
	Received, BlockFor int32
	WriteType          string // SIMPLE, BATCH, UNLOGGED_BATCH, COUNTER, BATCH_LOG, CAS, VIEW, CDC
	Contentions        uint16 // written on v5 when WriteType is CAS
}

// ReadTimeoutInfo is the detail of CodeReadTimeout.
type ReadTimeoutInfo struct {
	Consistency        Consistency
	Received, BlockFor int32
	DataPresent        bool
}

// FailureReason is one replica's failure in a v5 read or write failure.
type FailureReason struct {
	Node netip.Addr
	Code uint16
}

// FailureInfo is the detail of CodeReadFailure (with DataPresent) and
// CodeWriteFailure (with WriteType). v4 writes the number of failures,
// v5 the reasons by node.
type FailureInfo struct {
	Write              bool // CodeWriteFailure: WriteType is written instead of DataPresent
	Consistency        Consistency
	Received, BlockFor int32
	Reasons            []FailureReason
	DataPresent        bool
	WriteType          string
}

// FunctionFailureInfo is the detail of CodeFunctionFailure.
type FunctionFailureInfo struct {
	Keyspace, Function string
	ArgTypes           []string
}

// AlreadyExistsInfo is the detail of CodeAlreadyExists. Table is empty
// when a keyspace exists.
type AlreadyExistsInfo struct {
	Keyspace, Table string
}

// UnpreparedInfo is the detail of CodeUnprepared: the unknown id.
type UnpreparedInfo struct {
	ID []byte
}

// CASWriteUnknownInfo is the detail of CodeCASWriteUnknown.
type CASWriteUnknownInfo struct {
	Consistency        Consistency
	Received, BlockFor int32
}

func (e *UnavailableInfo) appendDetail(b []byte, _ Version) []byte {
	return AppendInt(AppendInt(AppendConsistency(b, e.Consistency), e.Required), e.Alive)
}

func (e *WriteTimeoutInfo) appendDetail(b []byte, v Version) []byte {
	b = AppendInt(AppendInt(AppendConsistency(b, e.Consistency), e.Received), e.BlockFor)
	b = AppendString(b, e.WriteType)
	if v >= Version5 && e.WriteType == "CAS" {
		b = AppendShort(b, e.Contentions)
	}
	return b
}

func (e *ReadTimeoutInfo) appendDetail(b []byte, _ Version) []byte {
	b = AppendInt(AppendInt(AppendConsistency(b, e.Consistency), e.Received), e.BlockFor)
	return append(b, boolByte(e.DataPresent))
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

func (e *FailureInfo) appendDetail(b []byte, v Version) []byte {
	b = AppendInt(AppendInt(AppendConsistency(b, e.Consistency), e.Received), e.BlockFor)
	b = AppendInt(b, int32(len(e.Reasons)))
	if v >= Version5 {
		for _, r := range e.Reasons {
			b = AppendShort(AppendInetAddr(b, r.Node), r.Code)
		}
	}
	if e.Write {
		return AppendString(b, e.WriteType)
	}
	return append(b, boolByte(e.DataPresent))
}

func (e *FunctionFailureInfo) appendDetail(b []byte, _ Version) []byte {
	return AppendStringList(AppendString(AppendString(b, e.Keyspace), e.Function), e.ArgTypes)
}

func (e *AlreadyExistsInfo) appendDetail(b []byte, _ Version) []byte {
	return AppendString(AppendString(b, e.Keyspace), e.Table)
}

func (e *UnpreparedInfo) appendDetail(b []byte, _ Version) []byte {
	return AppendShortBytes(b, e.ID)
}

func (e *CASWriteUnknownInfo) appendDetail(b []byte, _ Version) []byte {
	return AppendInt(AppendInt(AppendConsistency(b, e.Consistency), e.Received), e.BlockFor)
}
