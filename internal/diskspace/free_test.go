package diskspace

import "testing"

func TestFreeMeasuresTheTempDir(t *testing.T) {
	free, err := Free(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if free == 0 {
		t.Fatalf("free space of the temp dir is 0 bytes")
	}
}

func TestFreeNamesAMissingDir(t *testing.T) {
	_, err := Free("/nonexistent/metalog-diskspace")
	if err == nil {
		t.Fatal("no error for a missing dir")
	}
	t.Log(err)
}
