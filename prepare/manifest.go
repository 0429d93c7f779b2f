package prepare

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// manifestName is the manifest's file in an environment's folder; the
// digest covers every other file.
const manifestName = ".skill-sandbox-manifest.json"

// maxManifestBytes bounds the manifest read back.
const maxManifestBytes = 4 << 20

// manifest describes a built environment.
type manifest struct {
	Key           string    `json:"key"`
	Digest        string    `json:"digest"`
	Python        string    `json:"python"`
	PythonVersion string    `json:"python_version"`
	Platform      string    `json:"platform"`
	Requirements  string    `json:"requirements"`
	Index         string    `json:"index"`
	Installed     []Package `json:"installed"`
	Built         string    `json:"built"`
	// Kind is "node" for a Node environment (node.go), whose fields
	// follow; "" for a Python one.
	Kind        string `json:"kind,omitempty"`
	Node        string `json:"node,omitempty"`
	NodeVersion string `json:"node_version,omitempty"`
	NPMVersion  string `json:"npm_version,omitempty"`
	Registry    string `json:"registry,omitempty"`
	LockSHA256  string `json:"lock_sha256,omitempty"`
}

func readManifest(dir string) (*manifest, error) {
	f, err := os.Open(filepath.Join(dir, manifestName))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxManifestBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxManifestBytes)
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

func writeManifest(dir string, m *manifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	// A new file renamed over the name: the build may have left a link
	// (out of the build) or a FIFO there, never written through.
	return replaceFile(filepath.Join(dir, manifestName), append(data, '\n'), 0o644)
}

// treeDigest returns "sha256:HEX" over every entry below dir but the
// manifest, in lexical order: for each its path, type, permission bits
// and content (a file's SHA-256, a link's target). Sockets, devices and
// pipes are refused.
func treeDigest(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if rel == manifestName {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		perm := fi.Mode().Perm()
		switch {
		case d.IsDir():
			fmt.Fprintf(h, "d %q %o\n", rel, perm)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "l %q %q\n", rel, target)
		case d.Type().IsRegular():
			sum, err := fileSHA256(path)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "f %q %o %s\n", rel, perm, sum)
		default:
			return fmt.Errorf("%s: unexpected file type %s", rel, d.Type())
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
