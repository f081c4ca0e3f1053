package dev.tern.core.memory;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PageMemoryTest {
    private static final int PAGE = PageMemory.pageSize();

    @Test
    void mappedMemoryIsZeroAndBecomesResidentOnlyWhereTouched() {
        assertTrue(PageMemory.available(), "mmap, madvise and mincore are bound on Linux");
        try (Arena arena = Arena.ofShared()) {
            final MemorySegment memory = PageMemory.map(64L * PAGE, arena);
            assertEquals(0, memory.address() % PAGE, "page-aligned");
            assertEquals(0, PageMemory.residentBytes(memory), "nothing touched yet");
            assertEquals(0, memory.get(ValueLayout.JAVA_LONG, 5L * PAGE), "zero-filled");
            for (int page = 0; page < 8; page++) {
                memory.set(ValueLayout.JAVA_BYTE, (long) page * PAGE + 7, (byte) 1);
            }
            assertEquals(8L * PAGE, PageMemory.residentBytes(memory));
        }
    }

    @Test
    void discardedPagesGoBackToTheSystemAndReadAsZero() {
        try (Arena arena = Arena.ofShared()) {
            final MemorySegment memory = PageMemory.map(16L * PAGE, arena);
            memory.fill((byte) 0x5a);
            assertEquals(16L * PAGE, PageMemory.residentBytes(memory));
            // A slice that starts and ends inside pages: only the whole pages between go.
            final MemorySegment slice = memory.asSlice(PAGE / 2, 4L * PAGE);
            assertEquals(3L * PAGE, PageMemory.discard(slice));
            assertEquals(13L * PAGE, PageMemory.residentBytes(memory));
            assertEquals(0x5a, memory.get(ValueLayout.JAVA_BYTE, PAGE - 1), "the partial page keeps its bytes");
            assertEquals(0, memory.get(ValueLayout.JAVA_BYTE, PAGE), "a discarded page reads as zero");
            assertEquals(0x5a, memory.get(ValueLayout.JAVA_BYTE, 4L * PAGE), "the partial page at the end too");
        }
    }

    @Test
    void aMappingIsUnusableOnceItsArenaClosed() {
        final Arena arena = Arena.ofShared();
        final MemorySegment memory = PageMemory.map(PAGE, arena);
        memory.set(ValueLayout.JAVA_INT, 0, 42);
        arena.close();
        assertThrows(IllegalStateException.class, () -> memory.get(ValueLayout.JAVA_INT, 0));
    }

    @Test
    void aSizeThatIsNotWholePagesIsRefused() {
        try (Arena arena = Arena.ofShared()) {
            assertThrows(IllegalArgumentException.class, () -> PageMemory.map(PAGE + 1, arena));
        }
    }
}
