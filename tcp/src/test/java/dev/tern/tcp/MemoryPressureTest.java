package dev.tern.tcp;

import dev.tern.core.memory.PageMemory;
import dev.tern.tcp.testing.Captured;
import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.Arrays;

import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.PSH_ACK;
import static dev.tern.tcp.testing.Seg.SYN_ACK;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_PORT;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What memory pressure does to a connection already open ({@link TcpMemoryPressure}), one connection against a
 * scripted peer: its window stops growing at a quarter of its buffer without the right edge moving back, and opens
 * with a window update when the pressure ends; at the limit out-of-order text beyond the first held range is refused;
 * an idle connection's empty receive ring gives its pages back. Whole connections under pressure on the memory wire
 * are {@link OpenConnectionsUnderPressureTest}'s.
 */
class MemoryPressureTest {
    private static final long SECOND = 1_000_000_000L;
    private static final int BUFFER = 64 * 1024;
    /** Buffer bytes of one connection with 64 KiB buffers each way. */
    private static final long FULL = 2L * BUFFER + TcpMemory.recordBytes(BUFFER);

    /** The peer's second connection, opened by us from this port to put the layer under pressure. */
    private static final int OTHER_PORT = LOCAL_PORT + 1;

    private static TcpConfig config(long pressureBytes, long limitBytes) {
        return config(pressureBytes, limitBytes, ReceivePolicy.WindowRule.RIGHT_EDGE_STEP);
    }

    private static TcpConfig config(long pressureBytes, long limitBytes, ReceivePolicy.WindowRule rule) {
        return TcpHarness.config().sendBufferSize(BUFFER).receiveBufferSize(BUFFER)
            .receivePolicy(ReceivePolicy.LINUX.withWindow(rule))
            .memoryLimits(pressureBytes, limitBytes).build();
    }

    /** Under either window rule ({@link ReceiveWindow}): the clamp comes before the rule's silly window avoidance. */
    @ParameterizedTest
    @EnumSource(ReceivePolicy.WindowRule.class)
    void underPressureTheWindowRunsDownToAQuarterWithoutMovingBackAndReopensWhenThePressureEnds(
        ReceivePolicy.WindowRule rule) {
        // Two connections reach the mark; when one goes the budget is half of it, below seven eighths.
        try (TcpHarness h = TcpHarness.established(config(2 * FULL, 4 * FULL, rule), TcpOptions.DEFAULT)) {
            final int offeredEdge = REMOTE_ISS + 1 + 65535; // the SYN offered 64 KiB - 1 (no window scaling)
            final int other = h.tcp.connect(TcpHarness.PEER, 81, OTHER_PORT, TcpOptions.DEFAULT, TcpEvents.NONE,
                h.now());
            assertTrue(other >= 0);
            h.poll();
            h.clearReceived(); // its SYN
            assertEquals(1, h.counter("tcp.memory.pressure"));
            assertEquals(1, h.counter("tcp.memory.pressure_episodes"));

            // The window offered before the pressure only runs down: the edge stays where the SYN put it.
            h.send(PSH_ACK.seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 1).payload(TcpHarness.bytes(1000)));
            h.expect(ACK.ack(REMOTE_ISS + 1001).window(offeredEdge - (REMOTE_ISS + 1001)));
            h.read();
            h.expectNothing(); // the room the read freed is not offered: no window update under pressure

            int seq = REMOTE_ISS + 1001;
            int edge = offeredEdge;
            for (int i = 0; i < 60; i++) {
                h.send(PSH_ACK.seq(seq).ack(LOCAL_ISS + 1).payload(TcpHarness.bytes(1000)));
                seq += 1000;
                h.read();
                for (Captured ack : ours(h)) {
                    final int right = ack.tcp().ack() + ack.tcp().window();
                    assertTrue(SeqNum.ge(right, edge), "the right edge moved back: " + ack);
                    assertTrue(ack.tcp().window() <= Math.max(BUFFER / 4, edge - ack.tcp().ack()),
                        "a window grew beyond the clamp: " + ack);
                    edge = right;
                }
                h.clearReceived();
            }
            h.advance(SECOND); // the delayed ACK of the last segment
            final Captured last = ours(h)[ours(h).length - 1];
            assertEquals(seq, last.tcp().ack());
            // Held at a quarter of the buffer once the old edge passed (less what arrived since, by less than the
            // silly window threshold of one MSS).
            assertTrue(last.tcp().window() <= BUFFER / 4 && last.tcp().window() > BUFFER / 4 - 1460,
                "window " + last.tcp().window());
            assertEquals(1, h.counter("tcp.memory.pressure_clamps"));
            h.clearReceived();

            // The other connection goes: the pressure ends and the window that was held back goes at once.
            h.tcp.abort(other, h.now());
            h.poll();
            assertEquals(0, h.counter("tcp.memory.pressure"));
            final Captured[] update = ours(h);
            assertEquals(1, update.length, Arrays.toString(update));
            assertEquals(seq, update[0].tcp().ack());
            assertEquals(65535, update[0].tcp().window(), "the whole ring is offered again");
            assertEquals(1, h.counter("tcp.memory.pressure_reopens"));
        }
    }

    @Test
    void atTheLimitOutOfOrderTextBeyondTheFirstHeldRangeIsRefusedAndNothingHeldIsDropped() {
        // One connection: the budget has no room for another even at a quarter.
        try (TcpHarness h = TcpHarness.establishedAfter(0, config(FULL, FULL), TcpOptions.DEFAULT,
            SYN_ACK.sackOk())) {
            final byte[] data = TcpHarness.bytes(4000);
            final int base = REMOTE_ISS + 1;
            h.send(PSH_ACK.seq(base + 1000).ack(LOCAL_ISS + 1).payload(Arrays.copyOfRange(data, 1000, 2000)));
            h.expect(ACK.ack(base).sack(base + 1000, base + 2000));
            // A second hole: refused, and the ACK still reports the first range only.
            h.send(PSH_ACK.seq(base + 3000).ack(LOCAL_ISS + 1).payload(Arrays.copyOfRange(data, 3000, 4000)));
            h.expect(ACK.ack(base).sack(base + 1000, base + 2000));
            assertEquals(1, h.counter("tcp.drop.out_of_order_memory"));
            // Growing the first range is taken.
            h.send(PSH_ACK.seq(base + 2000).ack(LOCAL_ISS + 1).payload(Arrays.copyOfRange(data, 2000, 3000)));
            h.expect(ACK.ack(base).sack(base + 1000, base + 3000));
            // The hole fills: everything held is delivered, nothing was reneged on.
            h.send(PSH_ACK.seq(base).ack(LOCAL_ISS + 1).payload(Arrays.copyOfRange(data, 0, 1000)));
            h.expect(ACK.ack(base + 3000));
            h.send(PSH_ACK.seq(base + 3000).ack(LOCAL_ISS + 1).payload(Arrays.copyOfRange(data, 3000, 4000)));
            assertArrayEquals(data, h.read());
            assertEquals(1, h.counter("tcp.drop.out_of_order_memory"));
        }
    }

    @Test
    void underPressureAnIdleConnectionsEmptyReceiveRingGivesItsPagesBackAndTakesDataAgain() {
        try (TcpHarness h = TcpHarness.established(config(FULL, 4 * FULL), TcpOptions.DEFAULT)) {
            assertEquals(1, h.counter("tcp.memory.pressure"));
            final byte[] first = TcpHarness.bytes(30_000);
            int seq = REMOTE_ISS + 1;
            for (int at = 0; at < first.length; at += 1000) {
                h.send(PSH_ACK.seq(seq).ack(LOCAL_ISS + 1).payload(Arrays.copyOfRange(first, at, at + 1000)));
                seq += 1000;
            }
            assertArrayEquals(first, h.read());
            final long touched = h.tcp.memory().ringsResident();
            h.advance(TcpMemoryPressure.RECLAIM_IDLE_NS / 2);
            assertEquals(0, h.counter("tcp.memory.reclaimed_bytes"), "not idle long enough yet");

            h.advance(TcpMemoryPressure.RECLAIM_IDLE_NS);
            final long reclaimed = h.counter("tcp.memory.reclaimed_bytes");
            assertEquals(PageMemory.available() ? BUFFER : 0, reclaimed, "the whole receive ring (where pages can go)");
            if (PageMemory.available()) {
                final long resident = h.tcp.memory().ringsResident();
                assertTrue(touched - resident >= 28 * 1024, "resident " + touched + " -> " + resident);
            }
            assertEquals(FULL, h.counter("tcp.memory.in_use_bytes"), "the reservation is still owed");
            h.advance(2 * TcpMemoryPressure.RECLAIM_IDLE_NS);
            assertEquals(reclaimed, h.counter("tcp.memory.reclaimed_bytes"), "once per idle spell");

            final byte[] second = TcpHarness.bytes(1000);
            h.send(PSH_ACK.seq(seq).ack(LOCAL_ISS + 1).payload(second));
            assertArrayEquals(second, h.read());
        }
    }

    /** The segments we sent on the harness's connection (not the other one's), in order. */
    private static Captured[] ours(TcpHarness h) {
        return h.pending().stream().filter(f -> f.tcp().sourcePort() == LOCAL_PORT).toArray(Captured[]::new);
    }
}
