package snapshot_test

import (
	"errors"
	"fmt"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/snapshot"
)

func Example() {
	s, _, _, _ := schema.Apply(schema.Schema{}, simpleKS("shop"), schema.Env{Epoch: 1})
	s, _, _, _ = schema.Apply(s, minimalTable("shop", "orders"), schema.Env{Epoch: 2})

	data := snapshot.Encode(nil, &snapshot.Contents{Epoch: 2, Index: 7, Schema: s})
	c, err := snapshot.Decode(data)
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Epoch, c.Index, c.Schema.TableCount(), c.Schema.Digest() == s.Digest())

	data[len(data)/2] ^= 1
	_, err = snapshot.Decode(data)
	fmt.Println(errors.Is(err, snapshot.ErrCorrupt), errors.Is(err, snapshot.ErrChecksum))

	g := snapshot.NewGuard(1000)
	for _, size := range []int{500, 800, 900, 1200} {
		warn, err := g.Check(size)
		fmt.Println(size, warn, err)
	}
	// Output:
	// 2 7 1 true
	// true true
	// 500 false <nil>
	// 800 true <nil>
	// 900 false <nil>
	// 1200 false snapshot of 1200 bytes exceeds max_mutation_size 1000
}
