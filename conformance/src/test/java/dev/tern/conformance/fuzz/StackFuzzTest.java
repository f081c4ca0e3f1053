package dev.tern.conformance.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.stack.testing.Frames;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Fuzz harnesses for every input path (Ethernet, ARP, IPv4 with fragments, ICMP, UDP, TCP), each feeding a fresh
 * {@link FuzzStack} a sequence of frames ({@link FuzzInput}) and holding it to the same invariants: nothing escapes
 * the poll loop, {@code stack.internal_errors} stays 0, no buffer leaks, and every frame it sends is well-formed.
 *
 * <p>The harnesses differ in how much of the frame the fuzzer writes. {@link #ethernetFrames} takes whole frames;
 * the others build the outer headers (and, unless told not to, correct checksums), so the fuzzer's effort goes into
 * the layer under test instead of into guessing a MAC address or a checksum. The IPv4 harnesses start from a stack
 * that already knows the peer's MAC ({@link FuzzStack#runWithPeerKnown}), so its answers leave and are checked.
 *
 * <p>In CI (and any plain {@code mvn verify}) each runs once per seed in {@code StackFuzzTestInputs/<method>/}
 * (made from the captures in {@code pcaps/} by {@code SeedCorpusTest}). To fuzz, one harness at a time:
 * {@code JAZZER_FUZZ=1 mvn ... -Dtest='dev.tern.conformance.fuzz.StackFuzzTest#ipv4Fragments'}; see
 * conformance/README.md.
 */
class StackFuzzTest {
    private static final int ETHERTYPE_ARP = 0x0806;
    private static final int ETHERTYPE_IPV4 = 0x0800;

    /** Whole Ethernet frames, exactly as the fuzzer wrote them. */
    @FuzzTest(maxDuration = "10m")
    void ethernetFrames(byte[] data) {
        FuzzStack.run(frames(data, FrameMaker.AS_IS));
    }

    /**
     * ARP packets (RFC 826), in an Ethernet frame from the peer to broadcast (option A: to our MAC). Reaches the
     * neighbour cache's states, the merge rule, probes, conflicts, and the queue of packets waiting for resolution.
     */
    @FuzzTest(maxDuration = "10m")
    void arpPackets(byte[] data) {
        FuzzStack.run(frames(data, (record, index) -> Frames.ethernet(
            record.has(FuzzInput.OPTION_A) ? FuzzStack.MAC : MacAddress.BROADCAST, FuzzStack.PEER_MAC, ETHERTYPE_ARP,
            record.bytes())));
    }

    /**
     * IPv4 datagrams (header first), in an Ethernet frame from the peer to our MAC (option B: to broadcast). Option A
     * fixes the header checksum and, for an unfragmented ICMP datagram, the ICMP checksum, when the header lengths
     * allow.
     */
    @FuzzTest(maxDuration = "10m")
    void ipv4Datagrams(byte[] data) {
        FuzzStack.runWithPeerKnown(frames(data, (record, index) -> {
            final byte[] datagram = record.bytes().clone();
            if (record.has(FuzzInput.OPTION_A)) {
                fixChecksums(datagram);
            }
            return Frames.ethernet(record.has(FuzzInput.OPTION_B) ? MacAddress.BROADCAST : FuzzStack.MAC, FuzzStack.PEER_MAC,
                ETHERTYPE_IPV4, datagram);
        }));
    }

    /**
     * ICMP messages (RFC 792) in a well-formed IPv4 datagram from the peer, to us (option B: to the subnet broadcast),
     * with the ICMP checksum fixed unless option A. Reaches echo, the error rules, path MTU learning from
     * "fragmentation needed" about our own datagrams, and the errors we send.
     */
    @FuzzTest(maxDuration = "10m")
    void icmpMessages(byte[] data) {
        FuzzStack.runWithPeerKnown(frames(data, (record, index) -> {
            final byte[] message = record.bytes().clone();
            if (!record.has(FuzzInput.OPTION_A) && message.length >= 4) {
                BigEndian.u16(MemorySegment.ofArray(message), 2, 0);
                BigEndian.u16(MemorySegment.ofArray(message), 2, InternetChecksum.compute(MemorySegment.ofArray(message), 0, message.length));
            }
            final int destination = record.has(FuzzInput.OPTION_B) ? FuzzStack.BROADCAST_IP : FuzzStack.IP;
            final byte[] datagram = Frames.ipv4(FuzzStack.PEER_IP, destination, 1, index, 0, 64,
                java.util.Arrays.copyOf(message, Math.min(message.length, 65535 - 20)));
            return Frames.ethernet(record.has(FuzzInput.OPTION_B) ? MacAddress.BROADCAST : FuzzStack.MAC, FuzzStack.PEER_MAC,
                ETHERTYPE_IPV4, datagram);
        }));
    }

    /**
     * IPv4 fragments (RFC 791 §3.2) to us, with valid headers; the fuzzer picks which of four datagrams each belongs
     * to, its offset, MF, and its payload. Each record's bytes: {@code select:u8 offset:u16 payload...}, where select
     * bits 0-1 pick the identification, bit 2 sets MF, bit 3 makes it protocol 253 instead of ICMP, bit 4 sends it
     * from 198.18.0.3 instead of the peer; offset's low 13 bits are the fragment offset in 8-byte units. Reaches
     * reassembly: holes, overlaps, duplicates, eviction, too many fragments, oversize datagrams, timeouts.
     */
    @FuzzTest(maxDuration = "10m")
    void ipv4Fragments(byte[] data) {
        FuzzStack.runWithPeerKnown(frames(data, (record, index) -> {
            final byte[] bytes = record.bytes();
            final int select = bytes.length > 0 ? bytes[0] & 0xFF : 0;
            final int offset = bytes.length > 2 ? ((bytes[1] & 0x1F) << 8) | (bytes[2] & 0xFF) : 0;
            final byte[] payload = bytes.length > 3 ? java.util.Arrays.copyOfRange(bytes, 3, Math.min(bytes.length, 3 + 65535 - 20))
                : new byte[0];
            final int source = (select & 0x10) != 0 ? FuzzStack.PEER_IP + 2 : FuzzStack.PEER_IP;
            final int flags = (select & 0x04) != 0 ? 0x2000 : 0;
            final int protocol = (select & 0x08) != 0 ? 253 : 1;
            return Frames.ethernet(FuzzStack.MAC, FuzzStack.PEER_MAC, ETHERTYPE_IPV4,
                Frames.ipv4(source, FuzzStack.IP, protocol, 0x4000 + (select & 0x03), flags | offset, 64, payload));
        }));
    }

    /** Tern's UDP sockets in {@link #udpDatagrams}: an echo socket on port 7 and a member of 239.1.2.3 on port 5000. */
    static final FuzzStack.Application UDP_APPLICATION = new FuzzStack.Application(List.of("udp-open sock=1",
        "udp-bind sock=1 port=7", "udp-open sock=2", "udp-bind sock=2 port=5000", "udp-join sock=2 239.1.2.3"),
        List.of("udp-echo-all sock=1", "udp-echo-all sock=2"));

    /**
     * UDP datagrams (RFC 768: header first), in a well-formed IPv4 datagram from the peer to us (option B: to the subnet
     * broadcast); the UDP length and checksum are fixed unless option A. Tern's application echoes every datagram its
     * sockets receive (port 7, and port 5000, a member of 239.1.2.3). Reaches the UDP input checks, demultiplexing,
     * the receive rings, ICMP port unreachable, broadcast delivery, and the echoes' output.
     */
    @FuzzTest(maxDuration = "10m")
    void udpDatagrams(byte[] data) {
        FuzzStack.runWithPeerKnown(frames(data, (record, index) -> {
            final boolean broadcast = record.has(FuzzInput.OPTION_B);
            final int destination = broadcast ? FuzzStack.BROADCAST_IP : FuzzStack.IP;
            final byte[] datagram = java.util.Arrays.copyOf(record.bytes(), Math.min(record.bytes().length, 65535 - 20));
            if (!record.has(FuzzInput.OPTION_A)) {
                fixTransportChecksum(datagram, 17, FuzzStack.PEER_IP, destination);
            }
            return Frames.ethernet(broadcast ? MacAddress.BROADCAST : FuzzStack.MAC, FuzzStack.PEER_MAC, ETHERTYPE_IPV4,
                Frames.ipv4(FuzzStack.PEER_IP, destination, 17, index, 0, 64, datagram));
        }), UDP_APPLICATION);
    }

    /** The port Tern's application listens on in the TCP harnesses. */
    static final int TCP_PORT = 80;
    /** Tern's TCP application: a listener on port 80 whose connections are accepted and read as data comes. */
    static final FuzzStack.Application TCP_APPLICATION = new FuzzStack.Application(List.of("tcp-listen lsn=1 port=80"),
        List.of("tcp-accept-all lsn=1 conn=1", "tcp-read-all"));

    /**
     * TCP segments (RFC 9293 §3.1: header, options, data) from the peer to Tern's listener on port 80 (option B: to the
     * port the segment names), checksum fixed unless option A. Reaches LISTEN and SYN-RECEIVED (RFC 9293 §3.10.7.2-3),
     * SYN cookies, resets for closed ports, option parsing, and whatever connections the fuzzer manages to open.
     */
    @FuzzTest(maxDuration = "10m")
    void tcpSegments(byte[] data) {
        FuzzStack.runWithPeerKnown(frames(data, (record, index) -> {
            final byte[] segment = java.util.Arrays.copyOf(record.bytes(), Math.min(record.bytes().length, 65535 - 20));
            if (!record.has(FuzzInput.OPTION_B) && segment.length >= 4) {
                BigEndian.u16(MemorySegment.ofArray(segment), 2, TCP_PORT);
            }
            if (!record.has(FuzzInput.OPTION_A)) {
                fixTransportChecksum(segment, 6, FuzzStack.PEER_IP, FuzzStack.IP);
            }
            return tcpFrame(segment, index);
        }), TCP_APPLICATION);
    }

    /** The peer's port and ISN in {@link #tcpEstablished}; Tern's ISN is {@link FuzzStack#TCP_KEYS}' fixed one. */
    static final int PEER_PORT = 40000;
    static final long PEER_ISN = 3_000_000_000L;

    /**
     * TCP segments to a connection in ESTABLISHED: the harness first makes one (the peer's SYN with MSS, SACK
     * permitted, timestamps and window scale, Tern's SYN-ACK, the peer's ACK); Tern's application accepts it and
     * writes 3000 bytes, so that data is in flight. Each record is a TCP header (options, data) whose sequence and
     * acknowledgment numbers count from the connection's: the harness adds the peer's ISN + 1 and Tern's ISN + 1, puts
     * in the connection's ports (option B: keeps the record's) and fixes the checksum (unless option A). Reaches
     * segment acceptance (RFC 9293 §3.10.7.4, RFC 5961), RST and SYN handling, ACK processing, fast retransmit and
     * recovery, the reassembly queue, window updates, PAWS, FIN and the closing states, urgent data.
     */
    @FuzzTest(maxDuration = "10m")
    void tcpEstablished(byte[] data) {
        established(data, ESTABLISHED_APPLICATION);
    }

    /**
     * TCP segments to a connection that is sending, as {@link #tcpEstablished}, but Tern's application writes 120 KB
     * once it has accepted, so that the fuzzer's ACKs, SACK blocks, D-SACKs and windows drive the sender: the send
     * window and scaling, slow start and CUBIC, RACK-TLP and the SACK scoreboard (RFC 8985, RFC 6675), PRR, the
     * retransmission and persist timers, and the records of sent segments they free.
     */
    @FuzzTest(maxDuration = "10m")
    void tcpSending(byte[] data) {
        established(data, SENDING_APPLICATION);
    }

    private static void established(byte[] data, FuzzStack.Application application) {
        final List<FuzzStack.Frame> frames = new ArrayList<>(establishingFrames());
        final List<FuzzStack.Frame> fuzzed = frames(data, (record, index) -> tcpFrame(relative(record), index + 2));
        if (!fuzzed.isEmpty()) {
            // At least 1 us after the handshake's ACK, so the application has accepted the connection and written.
            final FuzzStack.Frame first = fuzzed.getFirst();
            fuzzed.set(0, new FuzzStack.Frame(Math.max(first.delayNs(), 1_000), first.rxFlags(), first.bytes()));
        }
        frames.addAll(fuzzed);
        FuzzStack.runWithPeerKnown(frames, application);
    }

    /**
     * A record as a segment of the harness's connection: sequence and acknowledgment numbers counted from the peer's
     * ISN + 1 and Tern's ISN + 1, the connection's ports (option B: the record's own), the checksum fixed (unless
     * option A).
     */
    private static byte[] relative(FuzzInput.Record record) {
        final byte[] segment = java.util.Arrays.copyOf(record.bytes(), Math.min(record.bytes().length, 65535 - 20));
        if (segment.length >= 12) {
            final MemorySegment s = MemorySegment.ofArray(segment);
            if (!record.has(FuzzInput.OPTION_B)) {
                BigEndian.u16(s, 0, PEER_PORT);
                BigEndian.u16(s, 2, TCP_PORT);
            }
            BigEndian.i32(s, 4, (int) (BigEndian.i32(s, 4) + PEER_ISN + 1));
            BigEndian.i32(s, 8, (int) (BigEndian.i32(s, 8) + FuzzStack.TCP_KEYS.isn() + 1));
        }
        if (!record.has(FuzzInput.OPTION_A)) {
            fixTransportChecksum(segment, 6, FuzzStack.PEER_IP, FuzzStack.IP);
        }
        return segment;
    }

    /**
     * TCP Fast Open (RFC 7413) at a server: the first record is the peer's SYN to port 80, with MSS 1460 and a Fast
     * Open option whose cookie is the record's first byte's count (0 to 18) of the bytes after it (option A: the cookie
     * Tern's key gives the peer, so the SYN's data is accepted), in the experimental option 254 with its magic number
     * under option B; the record's other bytes are the SYN's data. The rest are segments of that connection, as in
     * {@link #tcpEstablished}. Tern's stack serves Fast Open on every listener; its application accepts and reads
     * (whether a connection is accepted is the fuzzer's doing, so nothing is written to one). Reaches the cookie's check and its fallbacks (none, wrong, stale, of a wrong length), data in
     * the SYN (trimmed to the window), the Fast Open listener queue, and SYN-RECEIVED with data already accepted.
     */
    @FuzzTest(maxDuration = "10m")
    void tcpFastOpen(byte[] data) {
        final List<FuzzStack.Frame> frames = frames(data, (record, index) -> tcpFrame(index == 0 ? fastOpenSyn(record)
            : relative(record), index));
        FuzzStack.runWithPeerKnown(frames, TCP_APPLICATION, FuzzStack.FAST_OPEN_SERVER);
    }

    /** The Fast Open SYN {@link #tcpFastOpen} makes of its first record. */
    static byte[] fastOpenSyn(FuzzInput.Record record) {
        final byte[] b = record.bytes();
        final int length = b.length == 0 ? 0 : Math.min((b[0] & 0xFF) % 19, b.length - 1);
        byte[] cookie = java.util.Arrays.copyOfRange(b, Math.min(1, b.length), Math.min(1, b.length) + length);
        if (record.has(FuzzInput.OPTION_A)) {
            cookie = new byte[8];
            BigEndian.i64(MemorySegment.ofArray(cookie), 0, FuzzStack.FAST_OPEN_KEYS.cookie(FuzzStack.PEER_IP, FuzzStack.IP));
        }
        final boolean experimental = record.has(FuzzInput.OPTION_B);
        final int optionLength = (experimental ? 4 : 2) + cookie.length;
        final byte[] options = new byte[(4 + optionLength + 3) / 4 * 4];
        java.util.Arrays.fill(options, (byte) 1);                          // NOPs after the option
        options[0] = 2;
        options[1] = 4;
        options[2] = 0x05;
        options[3] = (byte) 0xB4;
        options[4] = (byte) (experimental ? 254 : 34);
        options[5] = (byte) optionLength;
        if (experimental) {
            options[6] = (byte) 0xF9;
            options[7] = (byte) 0x89;
        }
        System.arraycopy(cookie, 0, options, experimental ? 8 : 6, cookie.length);
        final byte[] payload = java.util.Arrays.copyOfRange(b, Math.min(1 + length, b.length), Math.min(b.length, 1 + length + 1460));
        return tcpSegment(PEER_PORT, TCP_PORT, PEER_ISN, 0, 0x02, 64240, options, payload);
    }

    /**
     * Accepts the harness's connection (after its ACK, frame 1) and writes 120 KB to it (the send ring holds 128 KiB);
     * reads as data comes.
     */
    static final FuzzStack.Application SENDING_APPLICATION = new FuzzStack.Application(
        List.of("tcp-listen lsn=1 port=80"),
        List.of("tcp-accept-all lsn=1 conn=1", "tcp-read-all"),
        Map.of(1, List.of("tcp-write conn=1 length=120000 pattern=1")));

    /** Accepts the harness's connection (after its ACK, frame 1) and writes 3000 bytes to it; reads as data comes. */
    static final FuzzStack.Application ESTABLISHED_APPLICATION = new FuzzStack.Application(
        List.of("tcp-listen lsn=1 port=80"),
        List.of("tcp-accept-all lsn=1 conn=1", "tcp-read-all"),
        Map.of(1, List.of("tcp-write conn=1 length=3000 pattern=1")));

    /** The peer's SYN (MSS 1460, SACK permitted, timestamps, window scale 7) and, 1 ms later, its ACK of Tern's SYN-ACK. */
    static List<FuzzStack.Frame> establishingFrames() {
        final byte[] options = {2, 4, 0x05, (byte) 0xB4, 4, 2, 8, 10, 0, 0, 0x03, (byte) 0xE8, 0, 0, 0, 0, 1, 3, 3, 7};
        final byte[] syn = tcpSegment(PEER_PORT, TCP_PORT, PEER_ISN, 0, 0x02, 64240, options, new byte[0]);
        final byte[] ackOptions = {1, 1, 8, 10, 0, 0, 0x03, (byte) 0xE9, 0, 0, 0, 0};
        final byte[] ack = tcpSegment(PEER_PORT, TCP_PORT, PEER_ISN + 1, FuzzStack.TCP_KEYS.isn() + 1, 0x10, 502, ackOptions,
            new byte[0]);
        return List.of(new FuzzStack.Frame(1_000_000, 0, tcpFrame(syn, 0)), new FuzzStack.Frame(1_000_000, 0, tcpFrame(ack, 1)));
    }

    /** A TCP segment with a correct checksum from the peer to us. */
    static byte[] tcpSegment(int sourcePort, int destinationPort, long seq, long ack, int flags, int window, byte[] options,
                             byte[] payload) {
        final byte[] segment = new byte[20 + options.length + payload.length];
        final MemorySegment s = MemorySegment.ofArray(segment);
        BigEndian.u16(s, 0, sourcePort);
        BigEndian.u16(s, 2, destinationPort);
        BigEndian.i32(s, 4, (int) seq);
        BigEndian.i32(s, 8, (int) ack);
        BigEndian.u8(s, 12, ((20 + options.length) / 4) << 4);
        BigEndian.u8(s, 13, flags);
        BigEndian.u16(s, 14, window);
        System.arraycopy(options, 0, segment, 20, options.length);
        System.arraycopy(payload, 0, segment, 20 + options.length, payload.length);
        fixTransportChecksum(segment, 6, FuzzStack.PEER_IP, FuzzStack.IP);
        return segment;
    }

    private static byte[] tcpFrame(byte[] segment, int index) {
        return Frames.ethernet(FuzzStack.MAC, FuzzStack.PEER_MAC, ETHERTYPE_IPV4,
            Frames.ipv4(FuzzStack.PEER_IP, FuzzStack.IP, 6, index, 0x4000, 64, segment));
    }

    /**
     * Writes a correct checksum into a UDP datagram or TCP segment (for UDP also the length field), where the header
     * is long enough to hold one.
     */
    static void fixTransportChecksum(byte[] transport, int protocol, int source, int destination) {
        final int field = protocol == 17 ? 6 : 16;
        if (transport.length < field + 2) {
            return;
        }
        final MemorySegment s = MemorySegment.ofArray(transport);
        if (protocol == 17) {
            BigEndian.u16(s, 4, transport.length);
        }
        BigEndian.u16(s, field, 0);
        final long sum = InternetChecksum.add(InternetChecksum.pseudoHeader(source, destination, protocol, transport.length), s, 0,
            transport.length);
        final int checksum = InternetChecksum.finish(sum);
        BigEndian.u16(s, field, protocol == 17 && checksum == 0 ? 0xFFFF : checksum);
    }

    /** Turns one record into a whole Ethernet frame. */
    @FunctionalInterface
    interface FrameMaker {
        FrameMaker AS_IS = (record, index) -> record.bytes();

        byte[] frame(FuzzInput.Record record, int index);
    }

    static List<FuzzStack.Frame> frames(byte[] data, FrameMaker maker) {
        final List<FuzzInput.Record> records = FuzzInput.parse(data).records();
        final List<FuzzStack.Frame> frames = new ArrayList<>(records.size());
        for (int i = 0; i < records.size(); i++) {
            final FuzzInput.Record record = records.get(i);
            frames.add(new FuzzStack.Frame(record.delayNs(), record.rxFlags(), maker.frame(record, i)));
        }
        return frames;
    }

    /** Writes a correct IPv4 header checksum, and ICMP checksum for an unfragmented ICMP datagram, where lengths allow. */
    static void fixChecksums(byte[] datagram) {
        if (datagram.length < 20) {
            return;
        }
        final MemorySegment segment = MemorySegment.ofArray(datagram);
        final int headerLength = (datagram[0] & 0x0F) * 4;
        if (headerLength < 20 || headerLength > datagram.length) {
            return;
        }
        BigEndian.u16(segment, 10, 0);
        BigEndian.u16(segment, 10, InternetChecksum.compute(segment, 0, headerLength));
        final int total = Math.min(BigEndian.u16(segment, 2), datagram.length);
        if (datagram[9] == 1 && (BigEndian.u16(segment, 6) & 0x3FFF) == 0 && total >= headerLength + 4) {
            BigEndian.u16(segment, headerLength + 2, 0);
            BigEndian.u16(segment, headerLength + 2, InternetChecksum.compute(segment, headerLength, total - headerLength));
        }
    }
}
