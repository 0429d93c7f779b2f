package audit

// appendEnvironment appends e as encoding/json would.
func appendEnvironment(b []byte, e *Environment) []byte {
	b = append(b, '{')
	b = appendStringField(b, "key", e.Key, true)
	b = appendStringField(b, "digest", e.Digest, false)
	b = appendStringField(b, "path", e.Path, false)
	b = appendBoolField(b, "built", e.Built)
	if len(e.Installed) > 0 {
		b = appendArray(appendKey(b, "installed", false), e.Installed, func(b []byte, p *EnvironmentPackage) []byte {
			b = append(b, '{')
			b = appendStringField(b, "name", p.Name, true)
			b = appendStringField(b, "version", p.Version, false)
			if p.SHA256 != "" {
				b = appendStringField(b, "sha256", p.SHA256, false)
			}
			if p.Integrity != "" {
				b = appendStringField(b, "integrity", p.Integrity, false)
			}
			return append(b, '}')
		})
	}
	if e.InstalledCount != 0 {
		b = appendIntField(b, "installed_count", int64(e.InstalledCount))
	}
	return append(b, '}')
}
