package dev.tern.afxdp.sys;

import dev.tern.core.sys.Libc;

/** A system call that failed, with its name and errno: "setsockopt(XDP_UMEM_REG) failed: EPERM (1)". */
public final class SysException extends RuntimeException {
    private final String call;
    private final int errno;

    public SysException(String call, int errno) {
        super(call + " failed: " + Libc.errnoName(errno) + " (" + errno + ")");
        this.call = call;
        this.errno = errno;
    }

    public String call() {
        return call;
    }

    public int errno() {
        return errno;
    }
}
