package dev.tern.tcp.testing;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.io.ByteRing;
import dev.tern.core.net.Ipv4Address;
import dev.tern.core.time.VirtualClock;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.memory.MemoryLink;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.EthernetHeader;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.ipv4.wire.IpProtocol;
import dev.tern.ipv4.wire.Ipv4Header;
import dev.tern.ipv4.wire.Ipv4Repr;
import dev.tern.tcp.TcpConfig;
import dev.tern.tcp.TcpEvents;
import dev.tern.tcp.TcpLayer;
import dev.tern.tcp.TcpOptions;
import dev.tern.tcp.TcpState;
import dev.tern.tcp.wire.TcpHeader;
import dev.tern.tcp.wire.TcpRepr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Plays the peer against one connection of a real stack on a virtual clock (style of gVisor's and smoltcp's TCP
 * tests). The peer writes segments as differences from templates and checks what the stack sends:
 *
 * <pre>{@code
 *   TcpHarness h = TcpHarness.established();
 *   h.send(SEG.seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 1).flags(FIN | ACK));
 *   h.expect(ACK.seq(LOCAL_ISS + 1).ack(REMOTE_ISS + 2));
 *   h.expectNothing();
 *   h.assertState(CLOSE_WAIT);
 * }</pre>
 *
 * Our stack has address {@link #US}, the peer {@link #PEER}. Our ISS is fixed ({@link #LOCAL_ISS}) through the
 * config's test-only {@code fixedIsn}; the peer's is {@link #REMOTE_ISS}. Time moves only in {@link #advance}.
 */
public final class TcpHarness implements AutoCloseable {
    public static final int US = Ipv4Address.parse("198.18.0.2");
    public static final int PEER = Ipv4Address.parse("198.18.0.1");
    public static final long PEER_MAC = MacAddress.parse("0a:00:00:00:00:01");
    public static final int LOCAL_ISS = 5000;
    public static final int REMOTE_ISS = 90000;
    public static final int LOCAL_PORT = 40000;
    public static final int REMOTE_PORT = 80;
    public static final int LISTEN_PORT = 80;
    public static final int PEER_CLIENT_PORT = 50000;
    public static final long MS = 1_000_000L;
    public static final long SECOND = 1_000_000_000L;

    public final VirtualClock clock = new VirtualClock(1_000 * SECOND);
    public final MemoryWire wire;
    public final TestStack stack;
    public final TcpLayer tcp;
    private final MemoryLink peer;
    private final TxFrame tx = new TxFrame();
    private final Deque<Captured> received = new ArrayDeque<>();
    public final List<Captured> all = new ArrayList<>();
    public final Recorder events = new Recorder();
    private final MemorySegment scratch = Arena.ofAuto().allocate(1 << 17);
    /** Our side's port and the peer's, filled into segments the peer sends. */
    public int localPort = LOCAL_PORT;
    public int remotePort = REMOTE_PORT;
    /** The source address of the peer's segments: {@link #PEER}, or a host the peer routes for (it is our gateway). */
    public int remoteAddress = PEER;
    public int conn = -1;
    public int listener = -1;
    /** Whether the peer answers ARP requests for its address (a peer that stopped answering: false). */
    public boolean answerArp = true;
    /** Every ARP request our stack sent for another address, in order (not its announcements). */
    public final List<ArpRequest> arpRequests = new ArrayList<>();
    /** Transmit claims of our stack to refuse next, as a full transmit ring would ({@link #refuseTransmits}). */
    private int claimsToRefuse;

    /** Our stack's next {@code claims} transmit claims are refused, as by a link whose transmit ring is full. */
    public void refuseTransmits(int claims) {
        claimsToRefuse = claims;
    }

    /**
     * An ARP request our stack sent: when, to which MAC (broadcast while resolving, the cached MAC when probing) and
     * for which address.
     */
    public record ArpRequest(long atNs, long destinationMac, int targetIp) {
        public boolean broadcast() {
            return destinationMac == MacAddress.BROADCAST;
        }
    }

    /** Records events, in order, as short strings. */
    public static final class Recorder implements TcpEvents {
        public final List<String> log = new ArrayList<>();

        @Override
        public void acceptable(int listener) {
            log.add("acceptable");
        }

        @Override
        public void established(int connection) {
            log.add("established");
        }

        @Override
        public void readable(int connection) {
            log.add("readable");
        }

        @Override
        public void writable(int connection) {
            log.add("writable");
        }

        @Override
        public void closed(int connection, int error) {
            log.add("closed " + error);
        }

        public boolean has(String event) {
            return log.contains(event);
        }
    }

    public TcpHarness(TcpConfig config) {
        this(config, 1500);
    }

    public TcpHarness(TcpConfig config, int mtu) {
        this(config, mtu, dev.tern.ipv4.Ipv4Config.DEFAULT);
    }

    /** Our stack with {@code ipv4Config} for its IP layer (the TTL of what it sends, for one). */
    public TcpHarness(TcpConfig config, int mtu, dev.tern.ipv4.Ipv4Config ipv4Config) {
        wire = MemoryWire.builder().clock(clock).mtu(mtu).build();
        peer = wire.attach("peer", PEER_MAC);
        peer.promiscuous(true);
        final dev.tern.ethernet.link.Link ours = new dev.tern.ethernet.link.ForwardingLink(wire.attach("us", 0x0200_0000_0002L)) {
            @Override
            public boolean claim(TxFrame frame) {
                if (claimsToRefuse > 0) {
                    claimsToRefuse--;
                    return false;
                }
                return super.claim(frame);
            }
        };
        stack = new TestStack("us", ours, "198.18.0.2/24", config, ipv4Config, now(), 64);
        tcp = stack.tcp;
        // The peer asks for our address first, so we know its MAC and our segments need no ARP.
        final byte[] arp = new byte[28];
        new dev.tern.arp.wire.ArpPacket().wrap(MemorySegment.ofArray(arp), 0, 28).write(1, PEER_MAC, PEER, 0, US);
        inject(MacAddress.BROADCAST, EtherType.ARP, arp);
        poll();
        received.clear();
        all.clear();
        arpRequests.clear();
    }

    /** The default config of these tests: Linux-like, with our ISS fixed. */
    public static TcpConfig.Builder config() {
        return TcpConfig.builder().fixedIsn(LOCAL_ISS).isnKey(1, 2);
    }

    public long now() {
        return clock.nanoTime();
    }

    // ---------------------------------------------------------------------------------------------- fixtures

    /** An active open: we connect from {@link #LOCAL_PORT}; the peer answers with {@code synAck} (seq/ack filled). */
    public static TcpHarness activeOpen(TcpConfig config, TcpOptions options, Seg synAck) {
        final TcpHarness h = new TcpHarness(config);
        h.connect(options);
        h.expect(Seg.SYN.seq(LOCAL_ISS).ack(0));
        h.send(synAck.seq(REMOTE_ISS).ack(LOCAL_ISS + 1));
        h.expect(Seg.ACK.seq(LOCAL_ISS + 1).ack(REMOTE_ISS + 1).len(0));
        h.assertState(TcpState.ESTABLISHED);
        return h;
    }

    /** ESTABLISHED by an active open; the peer offers MSS 1460 only (so our segments carry no options). */
    public static TcpHarness established() {
        return activeOpen(config().build(), TcpOptions.DEFAULT, Seg.SYN_ACK.mss(1460));
    }

    public static TcpHarness established(TcpConfig config, TcpOptions options) {
        return activeOpen(config, options, Seg.SYN_ACK.mss(1460));
    }

    /**
     * ESTABLISHED by an active open whose SYN-ACK comes {@code rttNs} after our SYN (so SRTT and the minimum RTT are
     * that), from a peer offering MSS 1460 and {@code synAck}'s other options (add {@code sackOk()} for SACK).
     */
    public static TcpHarness establishedAfter(long rttNs, TcpConfig config, TcpOptions options, Seg synAck) {
        final TcpHarness h = new TcpHarness(config);
        h.connect(options);
        h.expect(Seg.SYN.seq(LOCAL_ISS).ack(0));
        h.advance(rttNs);
        h.send(synAck.mss(1460).seq(REMOTE_ISS).ack(LOCAL_ISS + 1));
        h.expect(Seg.ACK.seq(LOCAL_ISS + 1).ack(REMOTE_ISS + 1).len(0));
        h.assertState(TcpState.ESTABLISHED);
        return h;
    }

    /** A passive open: we listen on {@link #LISTEN_PORT}; the peer's SYN is {@code syn} (seq filled). */
    public static TcpHarness passiveOpen(TcpConfig config, TcpOptions options, Seg syn) {
        final TcpHarness h = new TcpHarness(config);
        h.localPort = LISTEN_PORT;
        h.remotePort = PEER_CLIENT_PORT;
        h.listener = h.tcp.listen(LISTEN_PORT, 16, options, h.events);
        h.send(syn.seq(REMOTE_ISS));
        h.expect(Seg.SYN_ACK.seq(LOCAL_ISS).ack(REMOTE_ISS + 1));
        h.send(Seg.ACK.seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 1));
        h.conn = h.tcp.accept(h.listener);
        h.assertState(TcpState.ESTABLISHED);
        return h;
    }

    public void connect(TcpOptions options) {
        conn = tcp.connect(PEER, REMOTE_PORT, LOCAL_PORT, options, events, now());
        if (conn < 0) {
            fail("connect failed: " + conn);
        }
        poll();
    }

    // ------------------------------------------------------------------------------------------ peer actions

    /** The peer sends {@code seg} (ports filled in); our stack processes it at once. */
    public void send(Seg seg) {
        sendRawNoPoll(seg.toRepr(remotePort, localPort), seg.payloadOrEmpty(), true, seg.tos());
        poll();
    }

    /** The peer sends all of {@code segs} at once: our stack receives them in one batch. */
    public void sendBurst(Seg... segs) {
        for (Seg seg : segs) {
            sendRawNoPoll(seg.toRepr(remotePort, localPort), seg.payloadOrEmpty(), true, seg.tos());
        }
        poll();
    }

    /** Sends a TCP segment from the peer, with a correct checksum unless {@code goodChecksum} is false. */
    public void sendRaw(TcpRepr repr, byte[] payload, boolean goodChecksum) {
        sendRawNoPoll(repr, payload, goodChecksum, 0);
        poll();
    }

    private void sendRawNoPoll(TcpRepr repr, byte[] payload, boolean goodChecksum, int tos) {
        final int tcpLength = repr.headerLength() + payload.length;
        final byte[] segment = new byte[tcpLength];
        final MemorySegment memory = MemorySegment.ofArray(segment);
        final TcpHeader header = new TcpHeader().wrap(memory, 0, tcpLength);
        repr.emit(header);
        System.arraycopy(payload, 0, segment, repr.headerLength(), payload.length);
        TcpRepr.fillChecksum(header, remoteAddress, US, tcpLength);
        if (!goodChecksum) {
            segment[TcpHeader.CHECKSUM_OFFSET] ^= 0x01;
        }
        final byte[] packet = new byte[Ipv4Header.MIN_LENGTH + segment.length];
        new Ipv4Repr(remoteAddress, US, IpProtocol.TCP, 64, tos, 0, 0x4000, segment.length)
            .emit(new Ipv4Header().wrap(MemorySegment.ofArray(packet), 0, packet.length));
        System.arraycopy(segment, 0, packet, Ipv4Header.MIN_LENGTH, segment.length);
        inject(stack.link.macAddress(), EtherType.IPV4, packet);
    }

    /** Sends any IPv4 datagram from the peer's MAC to ours. */
    public void sendIp(int source, int destination, int protocol, byte[] payload) {
        sendIp(source, destination, protocol, 64, payload);
    }

    /** As {@link #sendIp(int, int, int, byte[])}, with the datagram's TTL. */
    public void sendIp(int source, int destination, int protocol, int ttl, byte[] payload) {
        final byte[] packet = new byte[Ipv4Header.MIN_LENGTH + payload.length];
        new Ipv4Repr(source, destination, protocol, ttl, 0, 0, 0x4000, payload.length)
            .emit(new Ipv4Header().wrap(MemorySegment.ofArray(packet), 0, packet.length));
        System.arraycopy(payload, 0, packet, Ipv4Header.MIN_LENGTH, payload.length);
        inject(stack.link.macAddress(), EtherType.IPV4, packet);
        poll();
    }

    private void inject(long destinationMac, int etherType, byte[] payload) {
        if (!peer.claim(tx)) {
            throw new IllegalStateException("wire out of buffers");
        }
        final int length = Math.max(EthernetHeader.MIN_FRAME_LENGTH, EthernetHeader.LENGTH + payload.length);
        new EthernetHeader().wrap(tx.segment(), tx.offset(), length).destination(destinationMac).source(PEER_MAC)
            .etherType(etherType);
        MemorySegment.copy(payload, 0, tx.segment(), ValueLayout.JAVA_BYTE, tx.offset() + EthernetHeader.LENGTH,
            payload.length);
        dev.tern.core.memory.BigEndian.zero(tx.segment(), tx.offset() + EthernetHeader.LENGTH + payload.length,
            length - EthernetHeader.LENGTH - payload.length);
        tx.length(length);
        peer.commit(tx);
        peer.flush();
    }

    // ------------------------------------------------------------------------------------------------- time

    /** Polls our stack until it is idle at the current instant, collecting what it sends. */
    public void poll() {
        for (int round = 0; round < 10_000; round++) {
            final int work = stack.poll(now());
            final int frames = collect();
            if (work == 0 && frames == 0) {
                return;
            }
        }
        throw new IllegalStateException("stack never idle");
    }

    /** Moves time forward by {@code ns}, stopping at every timer deadline and frame arrival on the way. */
    public void advance(long ns) {
        final long target = now() + ns;
        poll();
        while (now() - target < 0) {
            long next = Math.min(stack.pollAt(), wire.nextDeliveryNs());
            if (next - now() <= 0) {
                next = now() + 1;
            }
            clock.advanceTo(Math.min(next, target));
            poll();
        }
    }

    /** Advances until we send a segment (at most {@code maxNs}); returns how long that took. */
    public long advanceUntilSent(long maxNs) {
        final long start = now();
        poll();
        while (received.isEmpty()) {
            if (now() - start >= maxNs) {
                fail("nothing sent within " + maxNs / MS + " ms");
            }
            long next = Math.min(stack.pollAt(), wire.nextDeliveryNs());
            if (next - now() <= 0) {
                next = now() + 1;
            }
            clock.advanceTo(Math.min(next, start + maxNs));
            poll();
        }
        return received.peekFirst().atNs() - start;
    }

    private int collect() {
        final int[] count = {0};
        final List<byte[]> arpReplies = new ArrayList<>();
        peer.receive((segment, offset, length, flags) -> {
            final int etherType = dev.tern.core.memory.BigEndian.u16(segment, offset + 12);
            if (etherType == EtherType.ARP && length >= EthernetHeader.LENGTH + 28) {
                // Answer ARP requests for the peer's address, as a real host would.
                final dev.tern.arp.wire.ArpPacket arp = new dev.tern.arp.wire.ArpPacket()
                    .wrap(segment, offset + EthernetHeader.LENGTH, 28);
                if (arp.operation() == 1 && arp.targetIp() != arp.senderIp()) {
                    arpRequests.add(new ArpRequest(now(), new EthernetHeader().wrap(segment, offset, length)
                        .destination(), arp.targetIp()));
                }
                if (answerArp && arp.operation() == 1 && arp.targetIp() == PEER) {
                    final byte[] reply = new byte[28];
                    new dev.tern.arp.wire.ArpPacket().wrap(MemorySegment.ofArray(reply), 0, 28)
                        .write(2, PEER_MAC, PEER, arp.senderMac(), arp.senderIp());
                    arpReplies.add(reply);
                }
                return;
            }
            if (length < EthernetHeader.LENGTH + Ipv4Header.MIN_LENGTH || etherType != EtherType.IPV4) {
                return;
            }
            final Ipv4Header ip = new Ipv4Header().wrap(segment, offset + EthernetHeader.LENGTH,
                length - EthernetHeader.LENGTH);
            if (ip.check(true) != Ipv4Header.OK || ip.protocol() != IpProtocol.TCP) {
                return;
            }
            final int tcpLength = ip.totalLength() - ip.headerLength();
            final long at = offset + EthernetHeader.LENGTH + ip.headerLength();
            final TcpHeader header = new TcpHeader().wrap(segment, at, tcpLength);
            if (header.check() != TcpHeader.OK) {
                fail("malformed TCP header from our stack");
            }
            final boolean checksumOk = InternetChecksum.verifies(InternetChecksum.add(
                InternetChecksum.pseudoHeader(ip.source(), ip.destination(), IpProtocol.TCP, tcpLength), segment, at,
                tcpLength));
            final byte[] payload = new byte[tcpLength - header.dataOffset()];
            MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, at + header.dataOffset(), payload, 0, payload.length);
            final Captured frame = new Captured(now(), Ipv4Repr.parse(ip), TcpRepr.parse(header, tcpLength), payload,
                checksumOk);
            received.add(frame);
            all.add(frame);
            count[0]++;
        }, 100_000);
        for (byte[] reply : arpReplies) {
            inject(stack.link.macAddress(), EtherType.ARP, reply);
        }
        return count[0] + arpReplies.size();
    }

    // ------------------------------------------------------------------------------------------ expectations

    /** The next segment we sent must pass every check; returns it. */
    public Captured expect(FrameCheck... checks) {
        final Captured frame = received.pollFirst();
        if (frame == null) {
            fail("expected a segment " + describe(checks) + " but nothing was sent");
        }
        for (FrameCheck check : checks) {
            final String failure = check.check(frame);
            if (failure != null) {
                fail("expected " + describe(checks) + " but got " + frame + ": " + failure);
            }
        }
        return frame;
    }

    private static String describe(FrameCheck[] checks) {
        final StringBuilder text = new StringBuilder();
        for (FrameCheck check : checks) {
            text.append(check instanceof Seg ? check.toString() : "<check>").append(' ');
        }
        return text.toString().trim();
    }

    /** Nothing (more) was sent. */
    public void expectNothing() {
        poll();
        if (!received.isEmpty()) {
            fail("expected nothing but got " + received);
        }
    }

    /** Segments sent and not yet expected. */
    public List<Captured> pending() {
        return new ArrayList<>(received);
    }

    public void clearReceived() {
        received.clear();
    }

    public void assertState(int state) {
        assertEquals(TcpState.name(state), TcpState.name(tcp.state(conn)), "state of the connection");
    }

    public long counter(String label) {
        return stack.counter(label);
    }

    // ------------------------------------------------------------------------------------------ our application

    /** Our application writes {@code data} and tells the stack. */
    public int write(byte[] data) {
        final ByteRing ring = tcp.sendBuffer(conn);
        MemorySegment.copy(data, 0, scratch, ValueLayout.JAVA_BYTE, 0, data.length);
        final int written = ring.write(scratch, 0, data.length);
        tcp.sendable(conn, now());
        poll();
        return written;
    }

    public int write(String text) {
        return write(text.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    }

    /** Our application reads everything available (and tells the stack). */
    public byte[] read() {
        final ByteRing ring = tcp.receiveBuffer(conn);
        final int available = ring.available();
        final byte[] bytes = new byte[available];
        ring.read(scratch, 0, available);
        MemorySegment.copy(scratch, ValueLayout.JAVA_BYTE, 0, bytes, 0, available);
        tcp.consumed(conn, now());
        poll();
        return bytes;
    }

    public int readable() {
        return tcp.receiveBuffer(conn).available();
    }

    @Override
    public void close() {
        stack.close();
        wire.close();
    }

    /** Bytes 0, 1, 2, ... for payloads. */
    public static byte[] bytes(int length) {
        final byte[] data = new byte[length];
        for (int i = 0; i < length; i++) {
            data[i] = (byte) (i * 7 + 3);
        }
        return data;
    }

    public static int flags(int... flags) {
        int all = 0;
        for (int flag : flags) {
            all |= flag;
        }
        return all;
    }
}
