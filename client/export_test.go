package client

// DeadAddr is deadAddr for the external tests.
var DeadAddr = deadAddr
