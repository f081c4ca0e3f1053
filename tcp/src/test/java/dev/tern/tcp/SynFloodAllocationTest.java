package dev.tern.tcp;

import dev.tern.core.testing.Allocations;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.EthernetHeader;
import dev.tern.ipv4.wire.IpProtocol;
import dev.tern.ipv4.wire.Ipv4Header;
import dev.tern.tcp.wire.TcpFlags;
import dev.tern.tcp.wire.TcpHeader;
import dev.tern.tcp.wire.TcpRepr;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A SYN flood allocates nothing per SYN on the listening side (the goals: zero allocation per packet, bounded memory
 * under a SYN flood). The client's link sends SYNs to the server's listener from the client's own address and 4,096
 * source ports, as a flood generator does; the server answers each with a SYN-ACK, and the client's stack, which has
 * no such connection, answers that with a reset that ends the half-open connection, as a Linux peer does. Once with a
 * SYN queue that holds every SYN in flight, once with a queue of 8, where the rest are answered with SYN cookies and
 * keep no state. Two stacks on the memory wire, driven from this thread; ThreadMXBean counts the bytes.
 */
class SynFloodAllocationTest {
    private static final int PORT = 80;
    private static final int SOURCE_PORTS = 4096;
    private static final int FIRST_SOURCE_PORT = 20_000;
    private static final int SYNS_PER_ROUND = 32;
    private static final int FRAME_LENGTH = EthernetHeader.LENGTH + Ipv4Header.MIN_LENGTH + TcpHeader.MIN_LENGTH;
    private static final int STRIDE = 64;
    private static final int WARM_UP_ROUNDS = Integer.getInteger("warmup", 200_000) / SYNS_PER_ROUND * 2;
    private static final int MEASURED_ROUNDS = 250_000 / SYNS_PER_ROUND;

    @Test
    void synsAnsweredWithSynAcksAndEndedByResetsAllocateNothing() {
        flood(TcpConfig.defaults(), false);
    }

    @Test
    void synsAnsweredWithCookiesBeyondAFullSynQueueAllocateNothing() {
        flood(TcpConfig.builder().synQueueSize(8).synCookies(true).build(), true);
    }

    private static void flood(TcpConfig serverConfig, boolean cookies) {
        try (ZeroAllocationTest.Pair pair = new ZeroAllocationTest.Pair(MemoryWire.builder(), serverConfig,
                 TcpConfig.defaults());
             Arena arena = Arena.ofConfined()) {
            final MemorySegment syns = synFrames(arena, pair);
            final TxFrame tx = new TxFrame();
            final int[] next = {0};
            final long[] sent = {0};
            final Runnable round = () -> {
                for (int i = 0; i < SYNS_PER_ROUND && pair.client.link.claim(tx); i++) {
                    MemorySegment.copy(syns, (long) next[0] * STRIDE, tx.segment(), tx.offset(), FRAME_LENGTH);
                    tx.length(FRAME_LENGTH);
                    pair.client.link.commit(tx);
                    next[0] = next[0] + 1 == SOURCE_PORTS ? 0 : next[0] + 1;
                    sent[0]++;
                }
                // SYNs over, SYN-ACKs back, resets over.
                for (int i = 0; i < 4; i++) {
                    pair.poll();
                    pair.clock.advance(10_000);
                }
            };
            final int connectionsBefore = pair.server.tcp.connectionCount();
            final long synAcksBefore = pair.server.counter("tcp.tx.segments");
            final long resetsBefore = pair.server.counter("tcp.conn.half_open_resets");
            final long cookiesBefore = pair.server.counter("tcp.syncookies.sent");

            final long allocated = Allocations.measure(WARM_UP_ROUNDS, MEASURED_ROUNDS, round);

            final long synAcks = pair.server.counter("tcp.tx.segments") - synAcksBefore;
            final long resets = pair.server.counter("tcp.conn.half_open_resets") - resetsBefore;
            final long cookiesSent = pair.server.counter("tcp.syncookies.sent") - cookiesBefore;
            System.out.printf("SYN flood (%s): %d bytes allocated over the measured %d SYNs; %d SYN-ACKs, %d resets, "
                    + "%d cookies; %d connections at the end (%d before)%n", cookies ? "cookies" : "SYN queue",
                allocated, (long) MEASURED_ROUNDS * SYNS_PER_ROUND, synAcks, resets, cookiesSent,
                pair.server.tcp.connectionCount(), connectionsBefore);
            assertEquals(0, allocated, "bytes allocated over " + MEASURED_ROUNDS * SYNS_PER_ROUND + " SYNs");
            // Every SYN got its SYN-ACK, and the client's stack reset every one of them: a reset ends a half-open
            // connection unless its SYN-ACK carried a cookie (no state was kept, nothing to end). No state piled up.
            assertTrue(synAcks >= sent[0] * 99 / 100, synAcks + " SYN-ACKs for " + sent[0] + " SYNs");
            final long answered = resets + cookiesSent;
            assertTrue(answered >= synAcks * 99 / 100 && answered <= synAcks,
                resets + " resets and " + cookiesSent + " cookies for " + synAcks + " SYN-ACKs");
            assertTrue(pair.server.tcp.connectionCount() <= connectionsBefore + 2 * SYNS_PER_ROUND,
                pair.server.tcp.connectionCount() + " connections after the flood, " + connectionsBefore + " before");
            if (cookies) {
                assertTrue(cookiesSent >= synAcks / 2, cookiesSent + " of " + synAcks + " SYN-ACKs carried cookies");
                assertTrue(resets > 0, "the SYN queue's own half-open connections were reset too");
            } else {
                assertEquals(0, cookiesSent, "no cookies while the SYN queue has room");
            }
        }
    }

    /** {@value #SOURCE_PORTS} SYNs from the client's MAC and address to the server's listener, checksums valid. */
    private static MemorySegment synFrames(Arena arena, ZeroAllocationTest.Pair pair) {
        final MemorySegment frames = arena.allocate((long) SOURCE_PORTS * STRIDE, STRIDE);
        final EthernetHeader ethernet = new EthernetHeader();
        final Ipv4Header ip = new Ipv4Header();
        final TcpHeader tcp = new TcpHeader();
        final int source = pair.client.address();
        final int destination = pair.server.address();
        for (int i = 0; i < SOURCE_PORTS; i++) {
            final long base = (long) i * STRIDE;
            ethernet.wrap(frames, base, FRAME_LENGTH).destination(pair.server.link.macAddress())
                .source(pair.client.link.macAddress()).etherType(EtherType.IPV4);
            ip.wrap(frames, base + EthernetHeader.LENGTH, FRAME_LENGTH - EthernetHeader.LENGTH)
                .write(0, Ipv4Header.MIN_LENGTH + TcpHeader.MIN_LENGTH, i, Ipv4Header.FLAG_DONT_FRAGMENT, 64,
                    IpProtocol.TCP, source, destination);
            tcp.wrap(frames, base + EthernetHeader.LENGTH + Ipv4Header.MIN_LENGTH, TcpHeader.MIN_LENGTH)
                .write(FIRST_SOURCE_PORT + i, PORT, 0x1000_0000 + i * 7919, 0, TcpHeader.MIN_LENGTH, TcpFlags.SYN, 64_240);
            TcpRepr.fillChecksum(tcp, source, destination, TcpHeader.MIN_LENGTH);
        }
        return frames;
    }
}
