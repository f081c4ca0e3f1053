package dev.tern.afpacket.libc;

import dev.tern.core.sys.Libc;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LibcTest {
    @Test
    void failedCallBecomesAnExceptionNamingTheCallAndTheError() {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment state = Libc.newCallState(arena);
            final int fd = LibcException.check("socket(AF_INET, SOCK_DGRAM)", Libc.socket(state, LinuxAbi.AF_INET, LinuxAbi.SOCK_DGRAM, 0), state);
            try {
                final MemorySegment one = arena.allocateFrom(ValueLayout.JAVA_INT, 1);
                final int rc = Libc.setsockopt(state, fd, LinuxAbi.SOL_PACKET, LinuxAbi.PACKET_RX_RING, one, 4);
                final LibcException error = assertThrows(LibcException.class, () -> LibcException.check("setsockopt(PACKET_RX_RING)", rc, state));
                assertEquals("setsockopt(PACKET_RX_RING) failed: ENOPROTOOPT (92)", error.getMessage());
                assertEquals(LinuxAbi.ENOPROTOOPT, error.errno());
            } finally {
                LibcException.check("close", Libc.close(state, fd), state);
            }
        }
    }

    @Test
    void missingInterfaceNameGivesZeroIndexAndEnodev() {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment state = Libc.newCallState(arena);
            assertEquals(0, Libc.ifNameToIndex(state, arena.allocateFrom("tern-nx-" + ProcessHandle.current().pid() % 10000)));
            assertEquals(LinuxAbi.ENODEV, Libc.errno(state));
        }
    }

    @Test
    void unknownErrnoValuesAreStillPrintable() {
        assertEquals("EPERM", Libc.errnoName(1));
        assertEquals("errno 4095", Libc.errnoName(4095));
        assertTrue(Libc.pageSize() >= 4096);
    }
}
