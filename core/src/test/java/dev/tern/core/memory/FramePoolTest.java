package dev.tern.core.memory;

import dev.tern.core.testing.Allocations;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FramePoolTest {
    @Test
    void slabIsPageAlignedAndBuffersAreCacheLineMultiples() {
        try (FramePool pool = FramePool.allocate(10, 1514)) {
            assertEquals(0, pool.slab().address() % FramePool.ALIGNMENT);
            assertEquals(1536, pool.bufferSize());
            assertEquals(10L * 1536, pool.slab().byteSize());
        }
    }

    @Test
    void handsOutEveryBufferOnceThenReportsExhaustion() {
        try (FramePool pool = FramePool.allocate(64, 2048)) {
            final Set<Long> offsets = new HashSet<>();
            for (int i = 0; i < 64; i++) {
                final int index = pool.acquire();
                assertTrue(index >= 0);
                assertTrue(offsets.add(pool.offset(index)), "buffer handed out twice");
            }
            assertEquals(-1, pool.acquire());
            assertEquals(0, pool.available());
            assertEquals(64, pool.inUse());
        }
    }

    @Test
    void doubleReleaseIsCaught() {
        try (FramePool pool = FramePool.allocate(4, 128)) {
            final int index = pool.acquire();
            pool.release(index);
            assertFalse(pool.isInUse(index));
            assertThrows(IllegalStateException.class, () -> pool.release(index));
        }
    }

    @Test
    void leakDetectionNamesBuffersNeverReleased() {
        try (FramePool pool = FramePool.allocate(8, 128)) {
            final int kept = pool.acquire();
            pool.release(pool.acquire());
            final IllegalStateException leak = assertThrows(IllegalStateException.class, pool::assertNoLeaks);
            assertTrue(leak.getMessage().contains("1 frame buffer(s)"), leak.getMessage());
            pool.release(kept);
            pool.assertNoLeaks();
        }
    }

    @Test
    void acquireAndReleaseAllocateNothing() {
        try (FramePool pool = FramePool.allocate(256, 2048)) {
            final int[] held = new int[16];
            final long bytes = Allocations.measure(10_000, 1_000_000, () -> {
                for (int i = 0; i < held.length; i++) {
                    held[i] = pool.acquire();
                }
                for (int i = held.length - 1; i >= 0; i--) {
                    pool.release(held[i]);
                }
            });
            assertEquals(0, bytes);
            pool.assertNoLeaks();
        }
    }
}
