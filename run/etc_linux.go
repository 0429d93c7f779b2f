package run

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// etcReadable lists (as globs) the parts of /etc the script may read: what
// the C library, TLS, interpreters and common programs (fontconfig,
// LibreOffice, file(1), locales) need to run. It is the one list behind
// both the mount layout (setupEtc builds /etc from it) and the Landlock
// rules (addPathRules), so the two layers agree.
//
// Left out on purpose, because they describe the host or hold secrets:
// passwd, group, shadow, gshadow, sudoers*, ssh/ (host keys), ssl/private,
// hostname, machine-id, fstab, crontab, the package manager's state and
// any credentials folder. New entries must be neither.
func etcReadable() []string {
	return []string{
		// dynamic loader and C library
		"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
		"/etc/nsswitch.conf", "/etc/host.conf", "/etc/gai.conf",
		"/etc/protocols", "/etc/services",
		// time and locale
		"/etc/localtime", "/etc/timezone", "/etc/locale.alias", "/etc/locale.conf",
		// TLS: the certificates, never ssl/private
		"/etc/ssl/certs", "/etc/ssl/openssl.cnf", "/etc/ca-certificates", "/etc/ca-certificates.conf",
		// program selection and file types
		"/etc/alternatives", "/etc/mime.types", "/etc/magic", "/etc/magic.mime", "/etc/mailcap",
		// interpreters and shells
		"/etc/python3", "/etc/python3.*", "/etc/perl", "/etc/bash.bashrc", "/etc/inputrc",
		// fonts and office programs
		"/etc/fonts", "/etc/libreoffice", "/etc/papersize", "/etc/ImageMagick-*",
		// distribution name (os-release points into /usr)
		"/etc/os-release",
	}
}

// etcNetwork are added to etcReadable with AllowNetwork: name resolution.
func etcNetwork() []string {
	return []string{"/etc/resolv.conf", "/etc/hosts"}
}

// etcPatterns is etcReadable, plus etcNetwork with allowNetwork.
func etcPatterns(allowNetwork bool) []string {
	if allowNetwork {
		return append(etcReadable(), etcNetwork()...)
	}
	return etcReadable()
}

// etcEntry is one path of /etc to show inside the mount namespace.
type etcEntry struct {
	path   string
	link   string // symlink target, or ""
	fd     int    // O_PATH descriptor of a file or folder, when link is ""
	folder bool
}

// setupEtc replaces /etc by an empty tmpfs holding only the entries of
// etcPatterns: folders and files are bind-mounted (read-only) from the
// host's, symlinks re-created. Without Landlock the secrets of /etc are
// then still out of sight. It returns the new /etc's mount, to be made
// read-only once nothing more is mounted in it.
func setupEtc(allowNetwork bool) error {
	var entries []etcEntry
	defer func() {
		for _, e := range entries {
			if e.link == "" {
				unix.Close(e.fd)
			}
		}
	}()
	for _, pattern := range etcPatterns(allowNetwork) {
		matches, _ := filepath.Glob(pattern)
		for _, p := range matches {
			st, err := os.Lstat(p)
			if err != nil {
				continue
			}
			if st.Mode()&os.ModeSymlink != 0 {
				target, err := os.Readlink(p)
				if err == nil {
					entries = append(entries, etcEntry{path: p, link: target})
				}
				continue
			}
			if !st.IsDir() && !st.Mode().IsRegular() {
				continue
			}
			fd, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				continue
			}
			entries = append(entries, etcEntry{path: p, fd: fd, folder: st.IsDir()})
		}
	}
	if err := unix.Mount("tmpfs", "/etc", "tmpfs", maskFlags, maskOptions); err != nil {
		return fmt.Errorf("mask /etc: %v", err)
	}
	var errs []error
	for _, e := range entries {
		if err := os.MkdirAll(filepath.Dir(e.path), 0o755); err != nil {
			errs = append(errs, err)
			continue
		}
		if e.link != "" {
			if err := os.Symlink(e.link, e.path); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		var err error
		if e.folder {
			err = os.Mkdir(e.path, 0o755)
		} else {
			var f *os.File
			if f, err = os.OpenFile(e.path, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				f.Close()
			}
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		src := "/proc/self/fd/" + strconv.Itoa(e.fd)
		if err := unix.Mount(src, e.path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			errs = append(errs, fmt.Errorf("bind %s: %v", e.path, err))
			continue
		}
		if err := remountReadOnly(e.path); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// underEtc reports whether path is /etc or below it.
func underEtc(path string) bool {
	return path == "/etc" || strings.HasPrefix(path, "/etc/")
}
