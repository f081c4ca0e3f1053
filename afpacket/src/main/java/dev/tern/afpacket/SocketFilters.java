package dev.tern.afpacket;

import dev.tern.afpacket.libc.LinuxAbi;
import dev.tern.ethernet.link.ShardSteering;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

/**
 * Classic BPF programs as the kernel takes them: an array of {@code struct sock_filter} (u16 code, u8 jt, u8 jf,
 * u32 k) and the {@code struct sock_fprog} that points at it, for {@code PACKET_FANOUT_DATA} (the shards' steering)
 * and {@code SO_ATTACH_FILTER} ({@link SynShedFilter}).
 */
final class SocketFilters {
    private SocketFilters() {
    }

    /** A {@code struct sock_fprog} for {@code program}, both in {@code arena}. */
    static MemorySegment fprog(Arena arena, List<ShardSteering.Instruction> program) {
        final MemorySegment filter = arena.allocate((long) program.size() * LinuxAbi.SOCK_FILTER_SIZE, 8);
        for (int i = 0; i < program.size(); i++) {
            final ShardSteering.Instruction instruction = program.get(i);
            final long at = (long) i * LinuxAbi.SOCK_FILTER_SIZE;
            filter.set(ValueLayout.JAVA_SHORT, at, (short) instruction.code());
            filter.set(ValueLayout.JAVA_BYTE, at + 2, (byte) instruction.jt());
            filter.set(ValueLayout.JAVA_BYTE, at + 3, (byte) instruction.jf());
            filter.set(ValueLayout.JAVA_INT, at + 4, instruction.k());
        }
        final MemorySegment fprog = arena.allocate(LinuxAbi.SOCK_FPROG_SIZE, 8);
        fprog.set(ValueLayout.JAVA_SHORT, LinuxAbi.SOCK_FPROG_LEN_OFFSET, (short) program.size());
        fprog.set(ValueLayout.ADDRESS, LinuxAbi.SOCK_FPROG_FILTER_OFFSET, filter);
        return fprog;
    }
}
