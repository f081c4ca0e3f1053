package dev.tern.cli;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.net.Ipv4Address;
import dev.tern.core.time.VirtualClock;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.memory.MemoryLink;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ethernet.wire.EthernetHeader;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.stack.NetStack;
import dev.tern.stack.Pinger;
import dev.tern.core.io.SocketError;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.stack.TernSocketException;
import dev.tern.stack.UdpSocket;
import dev.tern.stack.sim.Simulation;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * {@code tern demo [--seed N] [--loss P] [--pcap FILE]}: two Tern stacks on an impaired memory wire, on virtual
 * time, showing each layer that exists: raw Ethernet frames, ARP, ping with small and fragmented payloads. Exits 0
 * only if every step passed. The run is deterministic: the same seed prints the same result.
 */
final class DemoCommand {
    static final String USAGE = "demo [--seed N] [--loss P] [--pcap FILE] [--tcp-mib N]";
    static final CommandHelp HELP = new CommandHelp("demo", "[--seed N] [--loss P] [--pcap FILE] [--tcp-mib N]",
        "two stacks over an impaired memory wire; exits 0 only if every step passed",
        "Runs Tern stacks on a memory wire with loss, reordering and delay, on virtual time: raw Ethernet frames, "
            + "ARP, ping (56 and 60000 bytes), UDP echo, multicast with IGMPv3 and a TCP transfer checked with "
            + "sha-256. Prints each step and exits 0 only if every step passed; the same seed gives the same run.",
        java.util.List.of(
            CommandHelp.option("--seed N", "seed of the wire's impairments", "1"),
            CommandHelp.option("--loss P", "share of frames the wire loses, 0..0.5", "0.02"),
            CommandHelp.option("--pcap FILE", "capture demo-a's interface to FILE", "none"),
            CommandHelp.option("--tcp-mib N", "MiB moved by the TCP step, 1..1024", "64")),
        false, java.util.List.of("./tern demo", "./tern demo --seed 7 --loss 0.05 --pcap demo.pcap"));
    private static final long MICROS = 1_000L;
    private static final long SECOND = 1_000_000_000L;

    private final PrintStream out;
    private boolean allPassed = true;

    DemoCommand(PrintStream out) {
        this.out = out;
    }

    int run(String[] argv) {
        final Arguments args = Arguments.parse("demo", argv, Set.of("--seed", "--loss", "--pcap", "--tcp-mib"), Set.of());
        args.operands(0, 0, USAGE);
        final long seed = args.longValue("--seed", 1);
        final double loss = args.doubleValue("--loss", 0.02, 0, 0.5);
        final Path pcap = args.has("--pcap") ? Path.of(args.value("--pcap", null)) : null;
        final int transferBytes = args.intValue("--tcp-mib", 64, 1, 1024) << 20;

        out.printf("Tern demo: stacks on a memory wire with %.1f%% loss, reordering and 50 us delay; virtual time, seed %d%n",
            loss * 100, seed);
        ethernetFrames(seed, loss);
        try (Simulation sim = new Simulation(impairedWire(seed, loss))) {
            if (pcap != null) {
                sim.capture(pcap);
            }
            final NetStack a = sim.addStack("demo-a", "198.18.0.1/24");
            final NetStack b = sim.addStack("demo-b", "198.18.0.2/24");
            final NetStack c = sim.addStack("demo-c", "198.18.0.3/24");
            arp(sim, a, b);
            ping(sim, a, b, 56, 10, 10);
            ping(sim, a, b, 60000, 40, 5);
            udpEcho(sim, a, b, seed);
            multicast(sim, a, b, c);
            tcpTransfer(sim, a, b, seed, transferBytes);
            if (pcap != null) {
                out.printf("capture of demo-a's interface written to %s%n", pcap);
            }
        }
        out.println(allPassed ? "demo: all steps passed" : "demo: SOME STEPS FAILED");
        return allPassed ? 0 : 1;
    }

    private static MemoryWire.Builder impairedWire(long seed, double loss) {
        return MemoryWire.builder().seed(seed).loss(loss).reordering(0.02, 200 * MICROS).delay(50 * MICROS, 10 * MICROS)
            .bandwidth(10_000_000_000L, 4 << 20);
    }

    /** Step 1: raw frames both ways; every frame is either delivered intact or counted lost by the wire. */
    private void ethernetFrames(long seed, double loss) {
        final VirtualClock clock = new VirtualClock();
        try (MemoryWire wire = impairedWire(seed, loss).clock(clock).build()) {
            final MemoryLink a = wire.attach("a", 0x0200_0000_000AL);
            final MemoryLink b = wire.attach("b", 0x0200_0000_000BL);
            final TxFrame frame = new TxFrame();
            final EthernetHeader header = new EthernetHeader();
            final int frames = 1000;
            final int[] received = new int[2];
            final int[] damaged = new int[1];
            for (int i = 0; i < frames; i++) {
                for (MemoryLink from : new MemoryLink[] {a, b}) {
                    final MemoryLink to = from == a ? b : a;
                    if (!from.claim(frame)) {
                        continue;
                    }
                    final int length = (60 + (i * 97) % 1400) & ~1; // even: the checksum field stays 16-bit aligned
                    header.wrap(frame.segment(), frame.offset(), length).destination(to.macAddress())
                        .source(from.macAddress()).etherType(0x88B5);
                    for (int k = EthernetHeader.LENGTH; k < length - 2; k++) {
                        BigEndian.u8(frame.segment(), frame.offset() + k, k + i);
                    }
                    BigEndian.u16(frame.segment(), frame.offset() + length - 2, 0);
                    BigEndian.u16(frame.segment(), frame.offset() + length - 2,
                        InternetChecksum.compute(frame.segment(), frame.offset() + EthernetHeader.LENGTH, length - EthernetHeader.LENGTH));
                    frame.length(length);
                    from.commit(frame);
                    from.flush();
                }
                clock.advance(10 * MICROS);
                for (int side = 0; side < 2; side++) {
                    final int index = side;
                    (side == 0 ? a : b).receive((segment, offset, length, flags) -> {
                        received[index]++;
                        if (!InternetChecksum.verifies(InternetChecksum.add(0, segment, offset + EthernetHeader.LENGTH,
                            length - EthernetHeader.LENGTH))) {
                            damaged[0]++;
                        }
                    }, 64);
                }
            }
            clock.advance(SECOND);
            a.receive((s, o, l, f) -> received[0]++, 4096);
            b.receive((s, o, l, f) -> received[1]++, 4096);
            final MemoryWire.WireStats stats = wire.stats;
            final boolean accounted = received[0] + received[1] + stats.lost + stats.queueDrops == 2L * frames;
            step("ethernet", accounted && damaged[0] == 0, String.format(
                "%d frames each way: a received %d, b received %d; wire lost %d, reordered %d; %d damaged",
                frames, received[0], received[1], stats.lost, stats.reordered, damaged[0]));
        }
    }

    /** Step 2: a resolves b's address (retrying if a request or reply is lost). */
    private void arp(Simulation sim, NetStack a, NetStack b) {
        final int target = b.address().address();
        final long requestsBefore = a.counters().value("arp.tx.requests");
        a.pinger().send(target, 0, 0, sim.nowNs());
        sim.runUntil(() -> a.neighbours().peek(target) != -1, 10 * SECOND);
        final long requests = a.counters().value("arp.tx.requests") - requestsBefore;
        final long mac = a.neighbours().peek(target);
        step("arp", mac == b.macAddress(), String.format("demo-a resolved %s -> %s after %d request(s)",
            Ipv4Address.format(target), mac == -1 ? "(nothing)" : MacAddress.format(mac),
            requests));
        sim.runFor(SECOND);
    }

    /** Steps 3, 4: pings every 100 ms until {@code wanted} replies or {@code maxCount} requests. */
    private void ping(Simulation sim, NetStack a, NetStack b, int size, int maxCount, int wanted) {
        final int target = b.address().address();
        final int[] replies = new int[1];
        final int[] damaged = new int[1];
        final long[] rttSum = new long[1];
        a.pinger().listener(new Pinger.Listener() {
            @Override
            public void onReply(int source, int sequence, int dataLength, int ttl, long roundTripNs, boolean intact) {
                replies[0]++;
                rttSum[0] += roundTripNs;
                if (!intact || dataLength != size) {
                    damaged[0]++;
                }
            }

            @Override
            public void onError(int reporter, int type, int code, int sequence) {
            }
        });
        int sent = 0;
        while (sent < maxCount && replies[0] < wanted) {
            a.pinger().send(target, ++sent, size, sim.nowNs());
            sim.runFor(100_000_000L);
        }
        sim.runFor(SECOND);
        final int fragments = size + 8 + 20 > 1500 ? (size + 8 + 1479) / 1480 : 1;
        step("ping " + size, replies[0] > 0 && damaged[0] == 0, String.format(
            "%d bytes%s: %d transmitted, %d received, %d%% loss, avg rtt %.3f ms (virtual), %d with wrong data",
            size, fragments > 1 ? " (" + fragments + " fragments each way)" : "", sent, replies[0],
            Math.round(100.0 * (sent - replies[0]) / sent), replies[0] == 0 ? 0 : rttSum[0] / 1e6 / replies[0],
            damaged[0]));
    }

    /** Step 5: datagrams of many sizes (some fragmented) to b's UDP echo; every echo that returns is byte-exact. */
    private void udpEcho(Simulation sim, NetStack a, NetStack b, long seed) {
        try (Arena arena = Arena.ofConfined()) {
            final UdpEchoService echo = new UdpEchoService(b, 7);
            sim.onPoll(echo::poll);
            final UdpSocket client = a.openUdp();
            client.connect(b.address().address(), 7);
            final MemorySegment sent = arena.allocate(9000);
            final MemorySegment received = arena.allocate(9000);
            final SplittableRandom random = new SplittableRandom(seed);
            int datagrams = 0;
            int echoes = 0;
            int damaged = 0;
            for (int i = 0; i < 100; i++) {
                final int size = i % 10 == 0 ? 9000 : 1 + random.nextInt(1400);
                for (int k = 0; k < size; k++) {
                    sent.set(ValueLayout.JAVA_BYTE, k, (byte) (k * 31 + i));
                }
                client.send(sent, 0, size);
                datagrams++;
                sim.runFor(2_000_000L);
                int length;
                while ((length = client.receive(received, 0, 9000)) >= 0) {
                    echoes++;
                    // Byte 0 is the round's tag (k = 0); every byte k must be k * 31 + round.
                    final int round = received.get(ValueLayout.JAVA_BYTE, 0) & 0xFF;
                    boolean intact = true;
                    for (int k = 0; k < length && intact; k++) {
                        intact = received.get(ValueLayout.JAVA_BYTE, k) == (byte) (k * 31 + round);
                    }
                    damaged += intact ? 0 : 1;
                }
            }
            sim.runFor(SECOND);
            int length;
            while ((length = client.receive(received, 0, 9000)) >= 0) {
                echoes++;
            }
            step("udp echo", echoes > 0 && damaged == 0, String.format(
                "%d datagrams of 1-9000 bytes to b's echo port: %d echoed back intact, %d lost, %d damaged",
                datagrams, echoes - damaged, datagrams - echoes, damaged));
            client.close();
            echo.close();
        } catch (TernSocketException e) {
            step("udp echo", false, e.getMessage());
        }
    }

    /** Step 6: one sender, two receivers joined to a group; one leaves halfway and hears nothing after. */
    private void multicast(Simulation sim, NetStack a, NetStack b, NetStack c) {
        final int group = Ipv4Address.parse("239.1.2.3");
        try (Arena arena = Arena.ofConfined()) {
            final UdpSocket onB = b.openUdp();
            onB.bind(5000);
            onB.join(group);
            final UdpSocket onC = c.openUdp();
            onC.bind(5000);
            onC.join(group);
            sim.runFor(SECOND);
            final UdpSocket sender = a.openUdp();
            final MemorySegment buffer = arena.allocate(1500);
            final int[] got = new int[2];
            int afterLeave = 0;
            for (int i = 0; i < 50; i++) {
                if (i == 25) {
                    onC.leave(group);
                    sim.runFor(SECOND / 10);
                }
                buffer.set(ValueLayout.JAVA_INT, 0, i);
                sender.sendTo(group, 5000, buffer, 0, 100);
                sim.runFor(SECOND / 100);
                while (onB.receive(buffer, 0, 1500) >= 0) {
                    got[0]++;
                }
                while (onC.receive(buffer, 0, 1500) >= 0) {
                    got[1]++;
                    afterLeave += i >= 25 ? 1 : 0;
                }
            }
            final long reports = b.counters().value("igmp.tx.reports_v3") + c.counters().value("igmp.tx.reports_v3");
            step("multicast", got[0] > 0 && got[1] > 0 && afterLeave == 0, String.format(
                "50 datagrams to %s: member b got %d, member c got %d before leaving at 25 and %d after; %d IGMPv3 reports",
                Ipv4Address.format(group), got[0], got[1], afterLeave, reports));
            sender.close();
            onB.close();
            onC.close();
        } catch (TernSocketException e) {
            step("multicast", false, e.getMessage());
        }
    }

    /**
     * Step 7: a TCP transfer (64 MiB by default) from a to b over the same lossy, reordering wire, checked with
     * sha-256 on both ends, with a progress line. Time is virtual: the rate shown is the simulated link's (10 Gbit/s
     * with 50 us delay and 2% loss), not the speed of this machine.
     */
    private void tcpTransfer(Simulation sim, NetStack a, NetStack b, long seed, int total) {
        try (Arena arena = Arena.ofConfined()) {
            final TcpListener listener = b.listen(5001, 4);
            final TcpConnection client = a.connect(b.address().address(), 5001);
            if (!sim.runUntil(client::isConnected, 30 * SECOND)) {
                step("tcp", false, "no connection: " + SocketError.describe(client.error()));
                return;
            }
            TcpConnection server = null;
            while (server == null && sim.nowNs() < 60 * SECOND + sim.nowNs()) {
                server = listener.accept();
                if (server == null) {
                    sim.step();
                }
            }
            final MemorySegment chunk = arena.allocate(1 << 16);
            final MemorySegment received = arena.allocate(1 << 16);
            final MessageDigest sent = MessageDigest.getInstance("SHA-256");
            final MessageDigest got = MessageDigest.getInstance("SHA-256");
            final SplittableRandom random = new SplittableRandom(seed);
            final byte[] bytes = new byte[1 << 16];
            final long start = sim.nowNs();
            final long startRetransmits = a.counters().value("tcp.tx.retransmits");
            long written = 0;
            long read = 0;
            int chunkLength = 0;
            int chunkOffset = 0;
            long nextProgress = 0;
            final boolean terminal = System.console() != null && System.console().isTerminal();
            while (read < total) {
                if (chunkOffset == chunkLength && written < total) {
                    random.nextBytes(bytes);
                    chunkLength = (int) Math.min(bytes.length, total - written);
                    MemorySegment.copy(bytes, 0, chunk, ValueLayout.JAVA_BYTE, 0, chunkLength);
                    sent.update(bytes, 0, chunkLength);
                    chunkOffset = 0;
                }
                if (chunkOffset < chunkLength) {
                    final int n = client.write(chunk, chunkOffset, chunkLength - chunkOffset);
                    chunkOffset += n;
                    written += n;
                }
                final int n = server.read(received, 0, (int) received.byteSize());
                if (n > 0) {
                    got.update(received.asSlice(0, n).asByteBuffer());
                    read += n;
                } else {
                    sim.step();
                }
                if (read >= nextProgress) {
                    nextProgress += total / 16;
                    if (terminal) {
                        out.printf("\r  [ .. ] tcp        %3d%% of %d MiB", read * 100 / total, total >> 20);
                        out.flush();
                    }
                }
                if (sim.nowNs() - start > 3_600 * SECOND) {
                    break;
                }
            }
            if (terminal) {
                out.print("\r");
            }
            // The rate counts until the receiver read the last byte, not the closing handshake after it.
            final double seconds = (sim.nowNs() - start) / 1e9;
            client.close();
            server.close();
            sim.runFor(SECOND);
            final boolean same = read == total && java.util.Arrays.equals(sent.digest(), got.digest());
            step("tcp", same, String.format(
                "%d MiB a -> b: sha-256 %s, %.1f Mbit/s on the simulated link (%.2f s virtual), %d retransmitted segments",
                total >> 20, same ? "equal" : "DIFFERENT", read * 8 / seconds / 1e6, seconds,
                a.counters().value("tcp.tx.retransmits") - startRetransmits));
            listener.close();
        } catch (TernSocketException | java.security.NoSuchAlgorithmException e) {
            step("tcp", false, e.getMessage());
        }
    }

    private void step(String name, boolean passed, String detail) {
        allPassed &= passed;
        out.printf("  [%s] %-10s %s%n", passed ? " ok " : "FAIL", name, detail);
    }
}
