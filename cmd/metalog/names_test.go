package main

import (
	"strings"
	"testing"

	"github.com/metalog/metalog/internal/cqltext"
)

func TestParseNameArg(t *testing.T) {
	for _, tc := range []struct {
		arg, keyspace, table string
		err                  string // a part of the error; "" for none
	}{
		{arg: "shop", keyspace: "shop"},
		{arg: "Shop", keyspace: "shop"},
		{arg: "shop.orders", keyspace: "shop", table: "orders"},
		{arg: "SHOP.Orders_2", keyspace: "shop", table: "orders_2"},
		{arg: `shop."MixedCase"`, keyspace: "shop", table: "MixedCase"},
		{arg: `"Shop"."MixedCase"`, keyspace: "Shop", table: "MixedCase"},
		{arg: `"Shop"`, keyspace: "Shop"},
		{arg: `shop."a.b"`, keyspace: "shop", table: "a.b"},
		{arg: `shop."say ""hi"""`, keyspace: "shop", table: `say "hi"`},
		{arg: `shop."select"`, keyspace: "shop", table: "select"},
		{arg: "a.b.c", err: `describe "a.b.c": 3 names`},
		{arg: `a."b".c`, err: "3 names"},
		{arg: "", err: "a name missing"},
		{arg: ".t", err: "a name missing"},
		{arg: "shop.", err: "a name missing"},
		{arg: "shop..t", err: "a name missing"},
		{arg: `shop.""`, err: "an empty quoted name"},
		{arg: `shop."orders`, err: "without its closing quote"},
		{arg: `shop."a"b`, err: `"b" after the name "a"`},
		{arg: "shop.or-ders", err: `"-ders" after the name "or"`},
		{arg: "shop.-t", err: `"-t" is not a name`},
	} {
		ks, table, err := parseNameArg("describe", tc.arg)
		switch {
		case tc.err == "" && (err != nil || ks != tc.keyspace || table != tc.table):
			t.Errorf("parseNameArg(describe, %q) = %q, %q, %v; want %q, %q", tc.arg, ks, table, err, tc.keyspace, tc.table)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "want keyspace or keyspace.table")):
			t.Errorf("parseNameArg(describe, %q) = %q, %q, %v; want an error with %q", tc.arg, ks, table, err, tc.err)
		}
	}
}

// TestParseNameArgReadsWhatDescribePrints: every name, as describe
// quotes it, reads back as itself.
func TestParseNameArgReadsWhatDescribePrints(t *testing.T) {
	for _, name := range []string{"orders", "MixedCase", "select", `with "quotes"`, "a.b", "1st", "Ünïcode"} {
		arg := "shop." + cqltext.QuoteIdentifier(name)
		if ks, table, err := parseNameArg("describe", arg); err != nil || ks != "shop" || table != name {
			t.Errorf("parseNameArg(describe, %q) = %q, %q, %v; want shop, %q", arg, ks, table, err, name)
		}
	}
}
