# cifuse.py BACKING MOUNTPOINT: a case-insensitive passthrough FUSE file
# system (fusepy), the counterpart of TestCasefoldFUSERefused: each name is
# looked up without regard to case in the backing folder, as ciopfs or an
# SMB share does, with no dentry of the kernel shared between spellings.
import os, sys, errno
from fusepy import FUSE, Operations, FuseOSError
class CI(Operations):
    def __init__(self, root): self.root = root
    def _real(self, path):
        cur = self.root
        for part in [p for p in path.split('/') if p]:
            try: names = os.listdir(cur)
            except OSError: return os.path.join(cur, part)
            hit = [n for n in names if n.lower() == part.lower()]
            cur = os.path.join(cur, hit[0] if hit else part)
        return cur
    def getattr(self, path, fh=None):
        st = os.lstat(self._real(path))
        return {k: getattr(st, k) for k in ('st_atime','st_ctime','st_gid','st_mode','st_mtime','st_nlink','st_size','st_uid','st_ino')}
    def readdir(self, path, fh): return ['.', '..'] + os.listdir(self._real(path))
    def open(self, path, flags): return os.open(self._real(path), flags)
    def create(self, path, mode, fi=None): return os.open(self._real(path), os.O_WRONLY|os.O_CREAT|os.O_TRUNC, mode)
    def read(self, path, size, off, fh): os.lseek(fh, off, 0); return os.read(fh, size)
    def write(self, path, data, off, fh): os.lseek(fh, off, 0); return os.write(fh, data)
    def truncate(self, path, length, fh=None): os.truncate(self._real(path), length)
    def release(self, path, fh): os.close(fh)
    def flush(self, path, fh): return 0
    def mkdir(self, path, mode): os.mkdir(self._real(path), mode)
    def unlink(self, path): os.unlink(self._real(path))
    def rmdir(self, path): os.rmdir(self._real(path))
    def rename(self, a, b): os.rename(self._real(a), self._real(b))
    def chmod(self, path, mode): os.chmod(self._real(path), mode)
    def chown(self, path, u, g): os.chown(self._real(path), u, g)
    def utimens(self, path, times=None): os.utime(self._real(path), times)
    def access(self, path, mode):
        if not os.access(self._real(path), mode): raise FuseOSError(errno.EACCES)
    def statfs(self, path):
        s = os.statvfs(self._real(path))
        return {k: getattr(s, k) for k in ('f_bavail','f_bfree','f_blocks','f_bsize','f_favail','f_ffree','f_files','f_flag','f_frsize','f_namemax')}
FUSE(CI(sys.argv[1]), sys.argv[2], foreground=True, allow_other=True, default_permissions=True, use_ino=True)
