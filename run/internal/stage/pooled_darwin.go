package stage

// receivePooled has nothing to receive: no stage is pooled here.
func receivePooled() error { return nil }

// prebuilt is a root built ahead, which only Linux has.
type prebuilt struct{}

// prebuildRoot builds nothing: no stage is pooled here.
func prebuildRoot(string) *prebuilt { return nil }
