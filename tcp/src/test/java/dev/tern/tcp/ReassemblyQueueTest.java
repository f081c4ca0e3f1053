package dev.tern.tcp;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/** The out-of-order ranges against a TreeMap model: same coverage, same RCV.NXT, same bound behaviour. */
class ReassemblyQueueTest {
    /** Disjoint, non-touching ranges (offsets from a base), merged on insert: the model. */
    static final class Model {
        final TreeMap<Long, Long> ranges = new TreeMap<>();
        final int max;

        Model(int max) {
            this.max = max;
        }

        /** Same result codes as the queue. */
        int add(long start, long end) {
            final TreeMap<Long, Long> merged = new TreeMap<>(ranges);
            long s = start;
            long e = end;
            final List<Long> overlapping = new ArrayList<>();
            for (Map.Entry<Long, Long> r : ranges.entrySet()) {
                if (r.getKey() <= e && r.getValue() >= s) {
                    overlapping.add(r.getKey());
                }
            }
            if (overlapping.size() == 1 && ranges.firstKey() != null) {
                final long os = overlapping.getFirst();
                if (os <= start && ranges.get(os) >= end) {
                    return ReassemblyQueue.DUPLICATE;
                }
            }
            if (overlapping.isEmpty() && ranges.size() == max) {
                return ReassemblyQueue.FULL;
            }
            for (long key : overlapping) {
                s = Math.min(s, key);
                e = Math.max(e, ranges.get(key));
                merged.remove(key);
            }
            merged.put(s, e);
            ranges.clear();
            ranges.putAll(merged);
            return overlapping.isEmpty() ? ReassemblyQueue.ADDED : ReassemblyQueue.MERGED;
        }

        long advance(long next) {
            long n = next;
            while (!ranges.isEmpty() && ranges.firstKey() <= n) {
                n = Math.max(n, ranges.pollFirstEntry().getValue());
            }
            return n;
        }
    }

    @Test
    void agreesWithATreeMapModelAcrossTheSequenceWrap() {
        qt().withExamples(300).forAll(longs().all(), integers().between(1, 8), integers().all())
            .checkAssert((seed, max, base) -> {
                final SplittableRandom random = new SplittableRandom(seed);
                try (ReassemblyQueue queue = new ReassemblyQueue(2, max)) {
                    final int block = queue.acquire();
                    final Model model = new Model(max);
                    long rcvNxt = 0;
                    for (int step = 0; step < 200; step++) {
                        if (random.nextInt(5) == 0) {
                            final long next = rcvNxt + random.nextInt(40);
                            final int advanced = queue.advance(block, base + (int) next);
                            rcvNxt = model.advance(next);
                            assertEquals((int) (base + rcvNxt), advanced, "advance at step " + step);
                        } else {
                            final long start = rcvNxt + 1 + random.nextInt(200);
                            final long end = start + 1 + random.nextInt(30);
                            assertEquals(model.add(start, end), queue.add(block, base + (int) start, base + (int) end),
                                "add [" + start + ", " + end + ") at step " + step + ", model " + model.ranges);
                        }
                        assertEquals(model.ranges.size(), queue.count(block));
                        int i = 0;
                        for (Map.Entry<Long, Long> r : model.ranges.entrySet()) {
                            assertEquals((int) (base + r.getKey()), queue.start(block, i));
                            assertEquals((int) (base + r.getValue()), queue.end(block, i));
                            i++;
                        }
                    }
                }
            });
    }

    @Test
    void recentBlocksComeMostRecentlyGrownFirst() {
        try (ReassemblyQueue queue = new ReassemblyQueue(1, 8)) {
            final int block = queue.acquire();
            queue.add(block, 100, 110);
            queue.add(block, 300, 310);
            queue.add(block, 200, 210);
            queue.add(block, 110, 120);
            final int[] out = new int[8];
            assertEquals(3, queue.recentBlocks(block, 3, out, 0));
            assertEquals(List.of(100, 120, 200, 210, 300, 310), List.of(out[0], out[1], out[2], out[3], out[4], out[5]));
            assertEquals(2, queue.recentBlocks(block, 2, out, 2));
            assertEquals(100, out[2]);
        }
    }

    @Test
    void aRepeatedRangeCountsAsTheMostRecentAndOverlapsAreFound() {
        try (ReassemblyQueue queue = new ReassemblyQueue(1, 8)) {
            final int block = queue.acquire();
            queue.add(block, 100, 110);
            queue.add(block, 200, 210);
            assertEquals(ReassemblyQueue.DUPLICATE, queue.add(block, 102, 108));
            final int[] out = new int[4];
            assertEquals(2, queue.recentBlocks(block, 2, out, 0));
            assertEquals(List.of(100, 110, 200, 210), List.of(out[0], out[1], out[2], out[3]));
            assertEquals(0, queue.firstOverlap(block, 105, 205));
            assertEquals(1, queue.firstOverlap(block, 110, 201));
            assertEquals(-1, queue.firstOverlap(block, 110, 200), "touching is not overlapping");
            assertEquals(10, queue.heldBytes(block, 105, 205));
            assertEquals(0, queue.heldBytes(block, 110, 200));
        }
    }

    @Test
    void blocksAreBoundedGlobally() {
        try (ReassemblyQueue queue = new ReassemblyQueue(2, 4)) {
            final int a = queue.acquire();
            final int b = queue.acquire();
            assertEquals(-1, queue.acquire());
            queue.release(a);
            assertEquals(a, queue.acquire());
            assertEquals(0, queue.count(b));
        }
    }
}
