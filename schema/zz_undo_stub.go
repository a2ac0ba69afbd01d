package schema

// Temporary stand-ins until the undo work lands.

func Prior(s Schema, c Change) any                         { return nil }
func Undo(s Schema, c Change, prior any) (Schema, error)   { return s, nil }
func AppendKeyspaceObjects(dst []byte, k *Keyspace) []byte { return AppendKeyspace(dst, k) }
func DecodeKeyspaceObjects(b []byte) (*Keyspace, error)    { return DecodeKeyspace(b) }
