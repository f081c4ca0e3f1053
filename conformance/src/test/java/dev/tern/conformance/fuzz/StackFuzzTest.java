package dev.tern.conformance.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.stack.testing.Frames;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Fuzz harnesses for the layers that exist (Ethernet, ARP, IPv4 with fragments, ICMP), each feeding a fresh
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
