package dev.tern.afpacket.libc;

import dev.tern.core.sys.Libc;

import java.lang.foreign.MemorySegment;

/**
 * A libc call failed: names the call and the error, e.g. {@code setsockopt(PACKET_RX_RING) failed: EINVAL (22)}.
 * Thrown only on control-plane paths (open, membership changes, statistics); the data path counts failures.
 */
public final class LibcException extends RuntimeException {
    private final String call;
    private final int errno;

    public LibcException(String call, int errno) {
        super(call + " failed: " + Libc.errnoName(errno) + " (" + errno + ")");
        this.call = call;
        this.errno = errno;
    }

    /**
     * Returns {@code rc}, or throws naming {@code call} when {@code rc == -1}, with the errno that
     * {@code callState} captured ({@link Libc}).
     */
    public static int check(String call, int rc, MemorySegment callState) {
        if (rc == -1) {
            throw new LibcException(call, Libc.errno(callState));
        }
        return rc;
    }

    /** The call and its argument of interest, as in the message: {@code "setsockopt(PACKET_RX_RING)"}. */
    public String call() {
        return call;
    }

    public int errno() {
        return errno;
    }
}
