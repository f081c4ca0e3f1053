package dev.tern.tcp;

import dev.tern.core.io.ByteRing;
import dev.tern.core.memory.PageMemory;
import dev.tern.core.testing.ExternalTools;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Rings released beyond the warm pool give their pages back together: adjacent ones in one system call, whatever
 * order they were released in, and none is handed out again before its pages went.
 */
class RingPoolTest {
    private static final int RING = 4096;

    @Test
    void ringsReleasedBeyondTheWarmPoolGoBackInOneCallPerAdjacentRunAndReadAsZerosWhenReused() {
        requireMmap();
        try (RingPool pool = new RingPool()) {
            final int warm = (int) (RingPool.WARM_BYTES / RING);
            final int beyond = 200; // within one 1 MiB slab after the warm pool's 16 slabs
            final List<ByteRing> rings = new ArrayList<>();
            for (int i = 0; i < warm + beyond; i++) {
                final ByteRing ring = pool.acquire(RING);
                ring.memory().fill((byte) 0x5a); // every page resident
                rings.add(ring);
            }
            final long residentBefore = pool.residentBytes();
            final List<ByteRing> last = new ArrayList<>(rings.subList(warm, warm + beyond));
            Collections.shuffle(last, new Random(7));
            for (int i = 0; i < warm; i++) {
                pool.release(rings.get(i));
            }
            for (ByteRing ring : last) {
                pool.release(ring);
            }
            assertEquals(0, pool.discardCalls(), "nothing goes back before the flush");
            assertEquals(residentBefore, pool.residentBytes());

            assertEquals((long) beyond * RING, pool.flushDiscards());
            assertEquals(1, pool.discardCalls(), "200 adjacent rings released in random order: one call");
            assertEquals(residentBefore - (long) beyond * RING, pool.residentBytes());
            assertEquals((long) beyond * RING, pool.discardedBytes());
            assertEquals(0, pool.flushDiscards(), "nothing left to flush");

            // The warm ones come back first, with their bytes; then the discarded ones, zero-filled.
            for (int i = 0; i < warm; i++) {
                assertEquals((byte) 0x5a, pool.acquire(RING).memory().get(ValueLayout.JAVA_BYTE, 0));
            }
            for (int i = 0; i < beyond; i++) {
                final MemorySegment memory = pool.acquire(RING).memory();
                assertEquals(-1, memory.mismatch(MemorySegment.ofArray(new byte[RING])), "a discarded ring reads as zeros");
            }
        }
    }

    @Test
    void aRingReleasedBeyondTheWarmPoolIsReusedOnlyAfterItsPagesWent() {
        requireMmap();
        try (RingPool pool = new RingPool()) {
            final int warm = (int) (RingPool.WARM_BYTES / RING);
            final List<ByteRing> rings = new ArrayList<>();
            for (int i = 0; i < warm + 1; i++) {
                rings.add(pool.acquire(RING));
            }
            for (ByteRing ring : rings) {
                ring.memory().fill((byte) 1);
                pool.release(ring);
            }
            // Warm rings are taken first; the one beyond waits for its discard, which the next acquire forces.
            for (int i = 0; i < warm; i++) {
                pool.acquire(RING);
            }
            final ByteRing reused = pool.acquire(RING);
            assertTrue(rings.contains(reused), "the cooled ring, not a new one");
            assertEquals(1, pool.discardCalls());
            assertEquals(0, reused.memory().get(ValueLayout.JAVA_BYTE, RING - 1));
        }
    }

    private static void requireMmap() {
        if (!PageMemory.available()) {
            ExternalTools.skip("no mmap here");
        }
    }
}
