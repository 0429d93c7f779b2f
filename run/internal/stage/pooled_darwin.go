package stage

// receivePooled has nothing to receive: no stage is pooled here.
func receivePooled() error { return nil }

// prebuilt is a root built ahead, which only Linux has.
type prebuilt struct{}

// used is false: nothing is built ahead here.
func (*prebuilt) used() bool { return false }

// prebuildRoot builds nothing: no stage is pooled here.
func prebuildRoot(string) *prebuilt { return nil }
