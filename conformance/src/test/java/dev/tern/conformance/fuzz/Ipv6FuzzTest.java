package dev.tern.conformance.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.net.Ipv6Address;
import dev.tern.core.net.Ipv6InterfaceAddress;
import dev.tern.core.time.VirtualClock;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.memory.MemoryLink;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ipv6.Ipv6Config;
import dev.tern.stack.NetStack;
import dev.tern.stack.testing.Frames;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Jazzer harnesses for IPv6 input: packets (fixed header first, extension headers, fragments, ICMPv6, neighbour and
 * router discovery, MLD) from a peer that the stack already knows, fed to a fresh stack with IPv6 and SLAAC on, as
 * a sequence of {@link FuzzInput} records; and TCP and UDP over IPv6 ({@link #ipv6Transport}). The invariants: nothing escapes the poll loop,
 * {@code stack.internal_errors} stays 0, and every IPv6 frame the stack sends is well formed (version 6, a payload
 * length that matches the frame, within the MTU, an ICMPv6, TCP or UDP checksum that verifies).
 *
 * <p>In every build each harness runs once per seed in {@code Ipv6FuzzTestInputs/<method>/}; to fuzz:
 * {@code JAZZER_FUZZ=1 mvn ... -Dtest='dev.tern.conformance.fuzz.Ipv6FuzzTest#ipv6Packets'} (conformance/README.md).
 */
class Ipv6FuzzTest {
    private static final long MAC = 0x0200_0000_0002L;
    private static final long PEER_MAC = 0x0200_0000_0001L;
    private static final Ipv6Address US = Ipv6Address.parse("2001:db8::2");
    private static final Ipv6Address PEER = Ipv6Address.parse("2001:db8::1");
    private static final int MTU = 1500;
    private static final int ETHERTYPE_IPV6 = 0x86DD;

    /**
     * IPv6 packets as the fuzzer wrote them, in a frame to our MAC (option B: to the all-nodes group's MAC). Option A
     * rewrites the addresses (from the peer, to us) and, for an ICMPv6 message right after the fixed header, the
     * payload length and checksum, so that the fuzzer's effort reaches ICMPv6 and neighbour discovery.
     */
    @FuzzTest(maxDuration = "10m")
    void ipv6Packets(byte[] data) {
        run(data, false);
    }

    /**
     * Fragments of packets to us: each record's bytes are {@code select:u8 offset:u16 payload...} (select bits 0-1
     * the identification, bit 2 more fragments; offset in 8-byte units), in a valid IPv6 packet from the peer with a
     * fragment header. Reaches reassembly: holes, overlaps, the header-chain rule, timeouts, oversize packets.
     */
    @FuzzTest(maxDuration = "10m")
    void ipv6Fragments(byte[] data) {
        run(data, true);
    }

    /**
     * TCP segments and UDP datagrams over IPv6, to a listener on port 80 (whose connections are accepted and read) and
     * a UDP echo on port 7: each record's bytes are the transport header and data (option A: UDP, else TCP), in a valid
     * IPv6 packet from the peer to us, the checksum computed over the pseudo-header unless option B (then the
     * fuzzer's). Reaches TCP's and UDP's IPv6 input, the connection key's folds and the row's address check, and
     * what both answer over IPv6 (resets, SYN-ACKs, cookies, echoes, port unreachables).
     */
    @FuzzTest(maxDuration = "10m")
    void ipv6Transport(byte[] data) {
        final VirtualClock clock = new VirtualClock();
        try (MemoryWire wire = MemoryWire.builder().clock(clock).build();
             java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            final MemoryLink peer = wire.attach("peer", PEER_MAC);
            final NetStack stack = NetStack.builder().link(wire.attach("us", MAC)).address("198.18.0.2/24")
                .ipv6(Ipv6Config.withAddresses(List.of(Ipv6InterfaceAddress.parse("2001:db8::2/64")))
                    .withDadTransmits(0))
                .clock(clock).countersInMemory().build();
            final TxFrame tx = new TxFrame();
            final int[] sent = {0};
            final dev.tern.stack.TcpListener listener = stack.listen(80, 16);
            final dev.tern.stack.UdpSocket echo = stack.openUdp6();
            echo.bind(7);
            final List<dev.tern.stack.TcpConnection> accepted = new java.util.ArrayList<>();
            final MemorySegment buffer = arena.allocate(65536);
            final Runnable application = () -> {
                try {
                    dev.tern.stack.TcpConnection c;
                    while ((c = listener.accept()) != null) {
                        accepted.add(c);
                    }
                    for (dev.tern.stack.TcpConnection connection : accepted) {
                        if (!connection.isEnded()) {
                            connection.read(buffer, 0, (int) buffer.byteSize());
                        }
                    }
                    int n;
                    while ((n = echo.receive(buffer, 0, (int) buffer.byteSize())) >= 0) {
                        echo.sendTo6(echo.lastSourceHigh(), echo.lastSourceLow(), echo.lastSourcePort(), buffer, 0, n);
                    }
                } catch (dev.tern.stack.TernSocketException e) {
                    // a connection's error (a reset) or an ICMP error: what the application sees, not a finding
                }
            };
            send(peer, tx, Frames.ethernet(Ipv6Address.multicastMac(US.solicitedNode().low()), PEER_MAC,
                ETHERTYPE_IPV6, icmp(PEER, US.solicitedNode(), 255, neighbourSolicitation())));
            step(stack, clock, peer, sent, 0);
            for (FuzzInput.Record record : FuzzInput.parse(data).records()) {
                final int nextHeader = record.has(FuzzInput.OPTION_A) ? 17 : 6;
                final byte[] packet = raw(PEER, US, nextHeader, 64, record.bytes());
                if (!record.has(FuzzInput.OPTION_B)) {
                    fillChecksum(packet, nextHeader);
                }
                send(peer, tx, Frames.ethernet(MAC, PEER_MAC, ETHERTYPE_IPV6, packet));
                step(stack, clock, peer, sent, record.delayNs());
                application.run();
                step(stack, clock, peer, sent, 0);
            }
            step(stack, clock, peer, sent, 61_000_000_000L);
            assertEquals(0, stack.counters().value("stack.internal_errors"),
                "a layer threw: " + stack.ethernet().firstInternalError());
            stack.close();
        } catch (dev.tern.stack.TernSocketException e) {
            throw new AssertionError(e);
        }
    }

    /** The checksum field of the TCP (6) or UDP (17) header after a fixed header, if there is room for it. */
    private static void fillChecksum(byte[] packet, int nextHeader) {
        final int field = 40 + (nextHeader == 6 ? 16 : 6);
        if (packet.length < field + 2) {
            return;
        }
        final MemorySegment p = MemorySegment.ofArray(packet);
        BigEndian.u16(p, field, 0);
        long sum = InternetChecksum.add(0, p, 8, 32);
        sum = InternetChecksum.add32(sum, packet.length - 40);
        sum = InternetChecksum.add32(sum, nextHeader);
        final int checksum = InternetChecksum.finish(InternetChecksum.add(sum, p, 40, packet.length - 40));
        BigEndian.u16(p, field, nextHeader == 17 && checksum == 0 ? 0xFFFF : checksum);
    }

    private static void run(byte[] data, boolean fragments) {
        final VirtualClock clock = new VirtualClock();
        try (MemoryWire wire = MemoryWire.builder().clock(clock).build()) {
            final MemoryLink peer = wire.attach("peer", PEER_MAC);
            final NetStack stack = NetStack.builder().link(wire.attach("us", MAC)).address("198.18.0.2/24")
                .ipv6(Ipv6Config.withAddresses(List.of(Ipv6InterfaceAddress.parse("2001:db8::2/64")))
                    .withDadTransmits(0).withSlaac(true))
                .clock(clock).countersInMemory().build();
            final TxFrame tx = new TxFrame();
            final int[] sent = {0};
            // The peer makes itself known, so the stack's answers leave and are checked.
            send(peer, tx, Frames.ethernet(Ipv6Address.multicastMac(US.solicitedNode().low()), PEER_MAC,
                ETHERTYPE_IPV6, icmp(PEER, US.solicitedNode(), 255, neighbourSolicitation())));
            step(stack, clock, peer, sent, 0);
            int index = 0;
            for (FuzzInput.Record record : FuzzInput.parse(data).records()) {
                final byte[] packet = fragments ? fragment(record.bytes()) : packet(record);
                final long destination = record.has(FuzzInput.OPTION_B) && !fragments
                    ? Ipv6Address.multicastMac(1) : MAC;
                send(peer, tx, Frames.ethernet(destination, PEER_MAC, ETHERTYPE_IPV6, packet));
                step(stack, clock, peer, sent, record.delayNs());
                index++;
            }
            step(stack, clock, peer, sent, 61_000_000_000L); // past every reassembly and neighbour timer
            assertEquals(0, stack.counters().value("stack.internal_errors"),
                "a layer threw: " + stack.ethernet().firstInternalError());
            stack.close();
        }
    }

    private static void send(MemoryLink peer, TxFrame tx, byte[] frame) {
        if (frame.length > MTU + 14) {
            return;
        }
        Frames.send(peer, tx, frame);
    }

    /** Polls the stack for {@code delayNs} of virtual time (in steps), checking every frame it sends. */
    private static void step(NetStack stack, VirtualClock clock, MemoryLink peer, int[] sent, long delayNs) {
        final long until = clock.nanoTime() + delayNs;
        do {
            stack.poll(clock.nanoTime());
            peer.receive((segment, offset, length, flags) -> {
                sent[0]++;
                check(segment, offset, length);
            }, 256);
            final long next = Math.min(until, Math.max(clock.nanoTime() + 1_000_000L, stack.pollAt()));
            if (next > clock.nanoTime()) {
                clock.advanceTo(next);
            }
        } while (clock.nanoTime() < until);
        stack.poll(clock.nanoTime());
    }

    /** An IPv6 frame Tern sent: well formed, and an ICMPv6 message in it verifies. */
    private static void check(MemorySegment segment, long offset, int length) {
        if (BigEndian.u16(segment, offset + 12) != ETHERTYPE_IPV6) {
            return;
        }
        assertTrue(length <= MTU + 14, "within the MTU: " + length);
        final long ip = offset + 14;
        assertEquals(6, BigEndian.u8(segment, ip) >>> 4, "version 6");
        final int payload = BigEndian.u16(segment, ip + 4);
        assertTrue(40 + payload <= length - 14, "payload length within the frame");
        assertTrue(length - 14 <= Math.max(60 - 14, 40 + payload), "no bytes after the payload but padding");
        long at = ip + 40;
        int next = BigEndian.u8(segment, ip + 6);
        if (next == 0) { // MLD's hop-by-hop header
            next = BigEndian.u8(segment, at);
            at += (BigEndian.u8(segment, at + 1) + 1) * 8L;
        }
        if (next == 58 || next == 6 || next == 17) {
            final int upper = (int) (ip + 40 + payload - at);
            long sum = InternetChecksum.add(0, segment, ip + 8, 32);
            sum = InternetChecksum.add32(sum, upper);
            sum = InternetChecksum.add32(sum, next);
            sum = InternetChecksum.add(sum, segment, at, upper);
            assertTrue(InternetChecksum.verifies(sum), "ICMPv6, TCP or UDP checksum (next header " + next + ")");
        }
    }

    private static byte[] packet(FuzzInput.Record record) {
        final byte[] packet = record.bytes().clone();
        if (!record.has(FuzzInput.OPTION_A) || packet.length < 48) {
            return packet;
        }
        final MemorySegment p = MemorySegment.ofArray(packet);
        p.set(ValueLayout.JAVA_BYTE, 0, (byte) 0x60);
        BigEndian.u16(p, 4, packet.length - 40);
        BigEndian.i64(p, 8, PEER.high());
        BigEndian.i64(p, 16, PEER.low());
        final Ipv6Address to = record.has(FuzzInput.OPTION_B) ? Ipv6Address.ALL_NODES : US;
        BigEndian.i64(p, 24, to.high());
        BigEndian.i64(p, 32, to.low());
        if (BigEndian.u8(p, 6) == 58) {
            BigEndian.u16(p, 42, 0);
            long sum = InternetChecksum.add(0, p, 8, 32);
            sum = InternetChecksum.add32(sum, packet.length - 40);
            sum = InternetChecksum.add32(sum, 58);
            BigEndian.u16(p, 42, InternetChecksum.finish(InternetChecksum.add(sum, p, 40, packet.length - 40)));
        }
        return packet;
    }

    private static byte[] fragment(byte[] bytes) {
        final int select = bytes.length > 0 ? bytes[0] & 0xFF : 0;
        final int offset = bytes.length > 2 ? ((bytes[1] & 0x1F) << 8) | (bytes[2] & 0xFF) : 0;
        final byte[] data = bytes.length > 3 ? java.util.Arrays.copyOfRange(bytes, 3, Math.min(bytes.length, 3 + MTU - 48))
            : new byte[0];
        final byte[] header = {58, 0, (byte) (offset >>> 5), (byte) ((offset << 3) | ((select & 4) != 0 ? 1 : 0)),
            0, 0, 0x40, (byte) (select & 3)};
        return raw(PEER, US, 44, 64, Frames.concat(header, data));
    }

    private static byte[] neighbourSolicitation() {
        final byte[] body = new byte[32];
        final MemorySegment b = MemorySegment.ofArray(body);
        b.set(ValueLayout.JAVA_BYTE, 0, (byte) 135);
        BigEndian.i64(b, 8, US.high());
        BigEndian.i64(b, 16, US.low());
        b.set(ValueLayout.JAVA_BYTE, 24, (byte) 1);
        b.set(ValueLayout.JAVA_BYTE, 25, (byte) 1);
        BigEndian.u48(b, 26, PEER_MAC);
        return body;
    }

    private static byte[] icmp(Ipv6Address from, Ipv6Address to, int hopLimit, byte[] message) {
        final byte[] packet = raw(from, to, 58, hopLimit, message);
        final MemorySegment p = MemorySegment.ofArray(packet);
        long sum = InternetChecksum.add(0, p, 8, 32);
        sum = InternetChecksum.add32(sum, message.length);
        sum = InternetChecksum.add32(sum, 58);
        BigEndian.u16(p, 42, InternetChecksum.finish(InternetChecksum.add(sum, p, 40, message.length)));
        return packet;
    }

    private static byte[] raw(Ipv6Address from, Ipv6Address to, int nextHeader, int hopLimit, byte[] payload) {
        final byte[] packet = new byte[40 + payload.length];
        final MemorySegment p = MemorySegment.ofArray(packet);
        p.set(ValueLayout.JAVA_BYTE, 0, (byte) 0x60);
        BigEndian.u16(p, 4, payload.length);
        BigEndian.u8(p, 6, nextHeader);
        BigEndian.u8(p, 7, hopLimit);
        BigEndian.i64(p, 8, from.high());
        BigEndian.i64(p, 16, from.low());
        BigEndian.i64(p, 24, to.high());
        BigEndian.i64(p, 32, to.low());
        System.arraycopy(payload, 0, packet, 40, payload.length);
        return packet;
    }
}
