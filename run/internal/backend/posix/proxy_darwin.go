package posix

import "os"

// ProxySocketPair has nothing to pair here: there is no namespace to
// create the listener in, so startInit binds it on the host's loopback
// (proxyRun.hostLn) before it generates the profile that names its port.
func ProxySocketPair() (sup, initEnd *os.File, err error) { return nil, nil, nil }
