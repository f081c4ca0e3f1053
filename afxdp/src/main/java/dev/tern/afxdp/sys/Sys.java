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

    /**
     * {@link #SYSCALL_BPF} without errno, for the once-a-second read of a counter whose failure needs no reason: a
     * downcall that captures errno allocates until C2 compiles it, and a call made once a second never gets there
     * (see {@code Libc}'s {@code SENDTO_NO_ERRNO}).
     */
    private static final MethodHandle SYSCALL_BPF_NO_ERRNO = Linker.nativeLinker().downcallHandle(
        Linker.nativeLinker().defaultLookup().find("syscall").orElseThrow(),
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

    /** {@link #bpf} without errno: 0 or a descriptor on success, -1 on failure. Allocates nothing. */
    public static int bpfWithoutErrno(int command, MemorySegment attr, int size) {
        try {
            return (int) (long) SYSCALL_BPF_NO_ERRNO.invokeExact(XdpAbi.SYS_BPF, command, attr, size);
        } catch (Throwable t) {
            throw new AssertionError("native call failed unexpectedly: " + t, t);
        }
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
