package dev.tern.conformance.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.tern.conformance.replay.Capture;
import dev.tern.conformance.replay.CapturedFrame;
import dev.tern.conformance.replay.ReplayScript;
import dev.tern.core.memory.BigEndian;
import dev.tern.stack.testing.Frames;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fuzz harnesses' seed corpora, made from the kernel's frames in the captures in {@code pcaps/}: real ARP,
 * real fragment trains, real echo requests, real UDP datagrams and TCP segments, each rewritten for the fuzz stack's
 * MACs (the addresses are already the same, 198.18.0.1 and .2), plus ICMP errors about the stack's own datagrams,
 * built from Tern's frames in the captures. Written on demand ({@code TERN_RECORD_SEEDS=1}) into
 * {@code src/test/resources/dev/tern/conformance/fuzz/StackFuzzTestInputs/<harness>/}, where Jazzer finds them;
 * checked in every build.
 */
class SeedCorpusTest {
    private static final String INPUTS = "dev/tern/conformance/fuzz/StackFuzzTestInputs";
    private static final int ETH = 14;

    @Test
    void everyHarnessHasSeedsFromTheCaptures() throws IOException {
        for (Method method : StackFuzzTest.class.getDeclaredMethods()) {
            if (method.isAnnotationPresent(FuzzTest.class)) {
                final var directory = SeedCorpusTest.class.getClassLoader().getResource(INPUTS + "/" + method.getName());
                assertNotNull(directory, "seeds for " + method.getName());
                try (Stream<Path> seeds = Files.list(Path.of(java.net.URI.create(directory.toString())))) {
                    assertTrue(seeds.count() >= 4, "at least 4 seeds for " + method.getName());
                }
            }
        }
    }

    @Test
    @EnabledIfEnvironmentVariable(named = "TERN_RECORD_SEEDS", matches = "1", disabledReason = "writes seed corpora on demand: TERN_RECORD_SEEDS=1")
    void writeSeedCorporaFromTheCaptures() throws IOException {
        final Path root = Path.of(System.getProperty("tern.root")).resolve("conformance/src/test/resources").resolve(INPUTS);
        final Map<String, Map<String, byte[]>> corpora = new TreeMap<>();
        for (String harness : List.of("ethernetFrames", "arpPackets", "ipv4Datagrams", "icmpMessages", "ipv4Fragments",
            "udpDatagrams", "tcpSegments", "tcpEstablished")) {
            corpora.put(harness, new LinkedHashMap<>());
        }
        for (Path pcap : dev.tern.conformance.replay.Pcaps.all()) {
            addSeeds(pcap, corpora);
            addTransportSeeds(pcap, corpora);
        }
        for (Map.Entry<String, Map<String, byte[]>> corpus : corpora.entrySet()) {
            final Path directory = root.resolve(corpus.getKey());
            if (Files.isDirectory(directory)) {
                try (Stream<Path> old = Files.list(directory)) {
                    for (Path file : old.filter(p -> p.getFileName().toString().startsWith("seed-")).toList()) {
                        Files.delete(file);
                    }
                }
            }
            Files.createDirectories(directory);
            for (Map.Entry<String, byte[]> seed : corpus.getValue().entrySet()) {
                Files.write(directory.resolve("seed-" + seed.getKey()), seed.getValue());
            }
        }
    }

    private static void addSeeds(Path pcap, Map<String, Map<String, byte[]>> corpora) {
        final Capture capture = Capture.read(pcap);
        final ReplayScript script = ReplayScript.read(ReplayScript.besides(pcap));
        final long ternMac = script.start().mac();
        final String name = pcap.getFileName().toString().replace(".pcap", "");
        final List<CapturedFrame> kernel = capture.notSentBy(ternMac).stream().map(f -> rewrite(f, ternMac)).toList();
        final List<CapturedFrame> tern = capture.sentBy(ternMac).stream().map(f -> rewrite(f, ternMac)).toList();

        // Whole frames: the kernel's side of the exchange in order, with its timing, then a few single frames.
        final List<FuzzInput.Record> sequence = new ArrayList<>();
        long previous = script.start().atNs();
        for (CapturedFrame frame : kernel) {
            sequence.add(new FuzzInput.Record(FuzzInput.delayCode(frame.timestampNs() - previous), frame.bytes()));
            previous = frame.timestampNs();
        }
        corpora.get("ethernetFrames").put(name + "-sequence", FuzzInput.encode(sequence));
        int singles = 0;
        for (CapturedFrame frame : kernel) {
            if (singles < 4 && !frame.isLaterFragment()) {
                corpora.get("ethernetFrames").put(name + "-frame-" + singles++, single(0, frame.bytes()));
            }
        }

        // ARP: the kernel's requests and replies; a conflicting claim on our address; a probe.
        for (CapturedFrame frame : kernel) {
            if (frame.isArp()) {
                final byte[] body = Arrays.copyOfRange(frame.bytes(), ETH, ETH + 28);
                final boolean unicast = frame.destination() == FuzzStack.MAC;
                corpora.get("arpPackets").put(name + "-" + (frame.arpOperation() == 1 ? "request" : "reply"),
                    single(unicast ? FuzzInput.OPTION_A : 0, body));
            }
        }
        for (CapturedFrame frame : tern) {
            if (frame.isArp() && frame.arpTargetIp() == FuzzStack.IP) {
                final byte[] conflict = Arrays.copyOfRange(frame.bytes(), ETH, ETH + 28);
                BigEndian.u48(MemorySegment.ofArray(conflict), 8, FuzzStack.PEER_MAC);
                corpora.get("arpPackets").put("conflicting-announcement", single(0, conflict));
                final byte[] probe = Frames.arp(1, FuzzStack.PEER_MAC, 0, 0, FuzzStack.IP);
                corpora.get("arpPackets").put("probe", single(0, probe));
            }
        }

        // IPv4: each datagram the kernel sent, as its train of frames.
        final Map<Integer, List<CapturedFrame>> trains = new LinkedHashMap<>();
        for (CapturedFrame frame : kernel) {
            if (frame.isIpv4()) {
                trains.computeIfAbsent(frame.u16(ETH + 4), k -> new ArrayList<>()).add(frame);
            }
        }
        int train = 0;
        int whole = 0;
        int fragmented = 0;
        for (List<CapturedFrame> frames : trains.values()) {
            // Two unfragmented datagrams and two fragment trains from each capture are variety enough.
            final boolean isFragmented = frames.size() > 1 || (frames.getFirst().u16(ETH + 6) & 0x3FFF) != 0;
            if (isFragmented ? fragmented++ >= 2 : whole++ >= 2) {
                continue;
            }
            train++;
            final List<FuzzInput.Record> datagrams = new ArrayList<>();
            final List<FuzzInput.Record> fragments = new ArrayList<>();
            for (CapturedFrame frame : frames) {
                final byte[] ip = Arrays.copyOfRange(frame.bytes(), ETH, ETH + frame.u16(ETH + 2));
                datagrams.add(new FuzzInput.Record(FuzzInput.OPTION_A, ip));
                final int flagsAndOffset = frame.u16(ETH + 6);
                final byte[] fragment = new byte[3 + ip.length - 20];
                fragment[0] = (byte) (((flagsAndOffset & 0x2000) != 0 ? 0x04 : 0) | (frame.ipProtocol() == 1 ? 0 : 0x08));
                fragment[1] = (byte) ((flagsAndOffset >>> 8) & 0x1F);
                fragment[2] = (byte) flagsAndOffset;
                System.arraycopy(ip, 20, fragment, 3, ip.length - 20);
                fragments.add(new FuzzInput.Record(0, fragment));
            }
            final String id = name + "-datagram-" + train;
            corpora.get("ipv4Datagrams").put(id, FuzzInput.encode(datagrams));
            if (isFragmented) {
                corpora.get("ipv4Fragments").put(id, FuzzInput.encode(fragments));
            }
            final byte[] message = reassemble(frames);
            if (frames.getFirst().ipProtocol() == 1 && message != null && message.length <= 16_384) {
                corpora.get("icmpMessages").put(id, single(0, message));
            }
        }

        // ICMP errors about our own datagrams: what path MTU discovery and the pinger's error reports live on.
        for (CapturedFrame frame : tern) {
            if (frame.ipProtocol() == 1 && !frame.isLaterFragment() && frame.icmpType() == 8) {
                final byte[] quote = Arrays.copyOfRange(frame.bytes(), ETH, ETH + 28);
                corpora.get("icmpMessages").put("fragmentation-needed-1280", single(0, icmp(3, 4, 1280, quote)));
                corpora.get("icmpMessages").put("fragmentation-needed-no-mtu", single(0, icmp(3, 4, 0, quote)));
                corpora.get("icmpMessages").put("host-unreachable", single(0, icmp(3, 1, 0, quote)));
                corpora.get("icmpMessages").put("time-exceeded", single(0, icmp(11, 0, 0, quote)));
                break;
            }
        }
    }

    /**
     * UDP and TCP seeds: the kernel's UDP datagrams (reassembled where fragmented), one at a time and all in order; the
     * kernel's TCP segments in order, as the listener harness takes them (a whole connection in {@code
     * tcp-kernel-client}: the fuzz stack's fixed ISN is the recording's, so the kernel's ACKs fit) and, after the
     * handshake, with sequence and acknowledgment numbers made relative, as the established harness takes them.
     */
    private static void addTransportSeeds(Path pcap, Map<String, Map<String, byte[]>> corpora) {
        final Capture capture = Capture.read(pcap);
        final ReplayScript script = ReplayScript.read(ReplayScript.besides(pcap));
        final long ternMac = script.start().mac();
        final String name = pcap.getFileName().toString().replace(".pcap", "");
        final List<CapturedFrame> kernel = capture.notSentBy(ternMac);

        final List<FuzzInput.Record> udp = new ArrayList<>();
        final Map<Integer, List<CapturedFrame>> trains = new LinkedHashMap<>();
        for (CapturedFrame frame : kernel) {
            if (frame.ipProtocol() == 17) {
                trains.computeIfAbsent(frame.u16(ETH + 4), k -> new ArrayList<>()).add(frame);
            }
        }
        for (List<CapturedFrame> train : trains.values()) {
            final byte[] datagram = reassemble(train);
            if (datagram != null) {
                udp.add(new FuzzInput.Record(udp.isEmpty() ? 0 : 1, datagram));
                corpora.get("udpDatagrams").put(name + "-datagram-" + udp.size(), single(0, datagram));
            }
        }
        if (udp.size() > 1) {
            corpora.get("udpDatagrams").put(name + "-sequence", FuzzInput.encode(udp));
        }

        final List<CapturedFrame> segments = kernel.stream().filter(f -> f.ipProtocol() == 6 && !f.isLaterFragment()).toList();
        if (segments.isEmpty()) {
            return;
        }
        final List<FuzzInput.Record> listener = new ArrayList<>();
        final List<FuzzInput.Record> established = new ArrayList<>();
        long previous = script.start().atNs();
        long kernelIsn = -1;
        for (CapturedFrame frame : segments) {
            final byte[] segment = transportBytes(frame);
            final int delay = FuzzInput.delayCode(frame.timestampNs() - previous);
            previous = frame.timestampNs();
            listener.add(new FuzzInput.Record(delay, segment));
            final MemorySegment s = MemorySegment.ofArray(segment);
            if ((segment[13] & 0x02) != 0) {
                kernelIsn = BigEndian.i32(s, 4) & 0xFFFF_FFFFL;
                continue;
            }
            if (kernelIsn >= 0) {
                final byte[] relative = segment.clone();
                final MemorySegment r = MemorySegment.ofArray(relative);
                BigEndian.i32(r, 4, (int) (BigEndian.i32(r, 4) - kernelIsn - 1));
                BigEndian.i32(r, 8, (int) (BigEndian.i32(r, 8) - FuzzStack.TCP_KEYS.isn() - 1));
                established.add(new FuzzInput.Record(delay, relative));
            }
        }
        corpora.get("tcpSegments").put(name + "-sequence", FuzzInput.encode(listener));
        corpora.get("tcpSegments").put(name + "-first", FuzzInput.encode(listener.subList(0, 1)));
        if (!established.isEmpty()) {
            corpora.get("tcpEstablished").put(name + "-sequence", FuzzInput.encode(established));
            for (int i = 0; i < Math.min(3, established.size()); i++) {
                corpora.get("tcpEstablished").put(name + "-segment-" + i, FuzzInput.encode(List.of(established.get(i))));
            }
        }
    }

    /** The IPv4 payload of one unfragmented frame. */
    private static byte[] transportBytes(CapturedFrame frame) {
        final int headerLength = (frame.u8(ETH) & 0x0F) * 4;
        return Arrays.copyOfRange(frame.bytes(), ETH + headerLength, ETH + frame.u16(ETH + 2));
    }

    /** The frame with the capture's Tern MAC replaced by the fuzz stack's, and every other unicast MAC by the peer's. */
    private static CapturedFrame rewrite(CapturedFrame frame, long ternMac) {
        final byte[] bytes = frame.bytes().clone();
        final byte[] from = macBytes(ternMac);
        final byte[] to = macBytes(FuzzStack.MAC);
        for (int i = 0; i + 6 <= bytes.length; i++) {
            if (Arrays.equals(bytes, i, i + 6, from, 0, 6)) {
                System.arraycopy(to, 0, bytes, i, 6);
            }
        }
        final long source = new CapturedFrame(0, bytes).source();
        if (source != FuzzStack.MAC) {
            replaceAll(bytes, macBytes(source), macBytes(FuzzStack.PEER_MAC));
        }
        return new CapturedFrame(frame.timestampNs(), bytes);
    }

    private static void replaceAll(byte[] bytes, byte[] from, byte[] to) {
        for (int i = 0; i + 6 <= bytes.length; i++) {
            if (Arrays.equals(bytes, i, i + 6, from, 0, 6)) {
                System.arraycopy(to, 0, bytes, i, 6);
            }
        }
    }

    private static byte[] macBytes(long mac) {
        return HexFormat.of().parseHex(String.format("%012x", mac));
    }

    private static byte[] single(int options, byte[] bytes) {
        return FuzzInput.encode(List.of(new FuzzInput.Record(options, bytes)));
    }

    /** The IPv4 payload of a train of fragments, or null when it has holes. */
    private static byte[] reassemble(List<CapturedFrame> frames) {
        final TreeMap<Integer, byte[]> pieces = new TreeMap<>();
        for (CapturedFrame frame : frames) {
            final int headerLength = (frame.u8(ETH) & 0x0F) * 4;
            pieces.put((frame.u16(ETH + 6) & 0x1FFF) * 8,
                Arrays.copyOfRange(frame.bytes(), ETH + headerLength, ETH + frame.u16(ETH + 2)));
        }
        final java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (Map.Entry<Integer, byte[]> piece : pieces.entrySet()) {
            if (piece.getKey() != out.size()) {
                return null;
            }
            out.writeBytes(piece.getValue());
        }
        return out.toByteArray();
    }

    private static byte[] icmp(int type, int code, int restOfHeader, byte[] quote) {
        return Frames.icmp(type, code, restOfHeader, quote);
    }
}
