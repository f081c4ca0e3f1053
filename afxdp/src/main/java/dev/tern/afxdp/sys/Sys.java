package dev.tern.afxdp.sys;

import dev.tern.core.sys.Libc;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * What the AF_XDP link needs of the system beyond core's {@link Libc} (socket, setsockopt, mmap, poll, the
 * {@code sendto} and {@code recvfrom} wakeups, which it shares with AF_PACKET): the {@code bpf()} system call, and
 * {@link #check} turning a failed call into a {@link SysException} naming it.
 *
 * <p>Stateless and thread-safe; a call-state segment ({@link Libc#newCallState}) belongs to one thread at a time.
 */
public final class Sys {
    /** {@code long syscall(long number, ...)} used as {@code syscall(__NR_bpf, int cmd, union bpf_attr *attr, unsigned size)}. */
    private static final MethodHandle SYSCALL_BPF = Libc.downcall("syscall",
        FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT), Linker.Option.firstVariadicArg(1));

    private Sys() {
    }

    /** Returns {@code rc}, or throws {@link SysException} naming {@code call} when {@code rc} is negative. */
    public static int check(String call, int rc, MemorySegment callState) {
        if (rc < 0) {
            throw new SysException(call, Libc.errno(callState));
        }
        return rc;
    }

    /** {@code bpf(cmd, attr, size)}; returns a file descriptor or 0 on success, -1 with errno on failure. */
    public static int bpf(MemorySegment cs, int command, MemorySegment attr, int size) {
        try {
            return (int) (long) SYSCALL_BPF.invokeExact(cs, XdpAbi.SYS_BPF, command, attr, size);
        } catch (Throwable t) {
            throw new AssertionError("native call failed unexpectedly: " + t, t);
        }
    }
}
