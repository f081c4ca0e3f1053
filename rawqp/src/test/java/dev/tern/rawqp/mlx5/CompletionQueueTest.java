package dev.tern.rawqp.mlx5;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HexFormat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

class CompletionQueueTest {
    private static Mlx5Rings.Cq cq(Arena arena, int count, int size) {
        final MemorySegment buffer = arena.allocate((long) count * size, 64);
        final Mlx5Cqe64 cqe = new Mlx5Cqe64();
        for (int i = 0; i < count; i++) {
            cqe.wrap(buffer, (long) i * size + (size - 64)).opOwn(Mlx5Cqe64.OPCODE_INVALID, 0);
        }
        return new Mlx5Rings.Cq(buffer, count, size, arena.allocate(4, 4));
    }

    @Test
    void anEntryIsSoftwaresOnlyWhenItsOwnerBitMatchesThePassParityAndItsOpcodeIsValid() {
        qt().forAll(integers().all(), integers().between(2, 8)).checkAssert((ci, log) -> {
            try (Arena arena = Arena.ofConfined()) {
                final int count = 1 << log;
                final Mlx5Rings.Cq ring = cq(arena, count, 64);
                final CompletionQueue queue = new CompletionQueue(ring, ci);
                final int parity = (ci & count) != 0 ? 1 : 0;
                final Mlx5Cqe64 entry = new Mlx5Cqe64().wrap(ring.buffer(), (long) (ci & (count - 1)) * 64);
                assertNull(queue.poll(), "a new CQ holds only INVALID entries");
                entry.opOwn(Mlx5Cqe64.OPCODE_RESP_SEND, parity ^ 1);
                assertNull(queue.poll(), "the owner bit of the previous pass: still the device's");
                entry.opOwn(Mlx5Cqe64.OPCODE_RESP_SEND, parity);
                assertNotNull(queue.poll());
                entry.opOwn(Mlx5Cqe64.OPCODE_INVALID, parity);
                assertNull(queue.poll(), "INVALID is never software's");
            }
        });
    }

    @Test
    void theConsumerIndexIsPublishedAsA24BitBigEndianCounter() {
        try (Arena arena = Arena.ofConfined()) {
            final Mlx5Rings.Cq ring = cq(arena, 4, 64);
            final CompletionQueue queue = new CompletionQueue(ring, 0x0012_3455);
            queue.consume();
            queue.publishConsumerIndex();
            assertEquals("00123456", HexFormat.of().formatHex(ring.doorbellRecord().toArray(ValueLayout.JAVA_BYTE)));
            final CompletionQueue wrapping = new CompletionQueue(ring, 0x00FF_FFFF);
            wrapping.consume();
            wrapping.publishConsumerIndex();
            assertEquals("00000000", HexFormat.of().formatHex(ring.doorbellRecord().toArray(ValueLayout.JAVA_BYTE)));
        }
    }

    @Test
    void with128ByteEntriesTheCqe64IsTheSecondHalf() {
        try (Arena arena = Arena.ofConfined()) {
            final Mlx5Rings.Cq ring = cq(arena, 4, 128);
            final CompletionQueue queue = new CompletionQueue(ring, 1);
            new Mlx5Cqe64().wrap(ring.buffer(), 128 + 64).clearBody().byteCount(77).opOwn(Mlx5Cqe64.OPCODE_RESP_SEND, 0);
            assertEquals(77, queue.poll().byteCount());
        }
    }
}
