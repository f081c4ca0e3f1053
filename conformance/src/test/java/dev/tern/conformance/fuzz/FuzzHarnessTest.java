package dev.tern.conformance.fuzz;

import dev.tern.conformance.replay.CapturedFrame;
import dev.tern.stack.testing.Frames;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

/** The fuzz harnesses' own machinery: the input format, and the output oracle, which must catch what it claims to. */
class FuzzHarnessTest {
    @Test
    void parseReadsBackWhatEncodeWrote() {
        qt().withExamples(200).forAll(lists().of(integers().between(0, 255)).ofSizeBetween(0, 10),
            integers().between(0, 300)).checkAssert((controls, size) -> {
                final List<FuzzInput.Record> records = new ArrayList<>();
                for (int i = 0; i < controls.size(); i++) {
                    records.add(new FuzzInput.Record(controls.get(i), Frames.pattern(size + i, i)));
                }
                final List<FuzzInput.Record> parsed = FuzzInput.parse(FuzzInput.encode(records)).records();
                assertEquals(records.size(), parsed.size());
                for (int i = 0; i < records.size(); i++) {
                    assertEquals(records.get(i).control(), parsed.get(i).control());
                    assertArrayEquals(records.get(i).bytes(), parsed.get(i).bytes());
                }
            });
    }

    @Test
    void aRecordCutShortKeepsTheBytesThereAreAndAtMost64AreRead() {
        final List<FuzzInput.Record> cut = FuzzInput.parse(new byte[] {0x12, 0x00, 0x05, 1, 2}).records();
        assertEquals(1, cut.size());
        assertArrayEquals(new byte[] {1, 2}, cut.getFirst().bytes());
        assertEquals(2_000_000L, cut.getFirst().delayNs(), "code 2: 2 ms");
        assertTrue(cut.getFirst().has(FuzzInput.CHECKSUM_OK));
        assertEquals(FuzzInput.MAX_RECORDS, FuzzInput.parse(new byte[1000]).records().size());
        assertEquals(List.of(), FuzzInput.parse(new byte[0]).records());
    }

    @Test
    void delayCodesRoundUpToTheNextListedWait() {
        assertEquals(0, FuzzInput.delayCode(0));
        assertEquals(1, FuzzInput.delayCode(1));
        assertEquals(2, FuzzInput.delayCode(1_500_000));
        assertEquals(15, FuzzInput.delayCode(60_000_000_000L));
    }

    @Test
    void theOutputOracleCatchesABadChecksumAnErrorAboutAnErrorAndAForeignSource() {
        final byte[] reply = Frames.echoRequestFrame(FuzzStack.PEER_MAC, FuzzStack.MAC, FuzzStack.IP, FuzzStack.PEER_IP, 1, 1,
            new byte[8]);
        reply[34] = 0;
        reply[36] = 0;
        reply[37] = 0;
        final byte[] good = reply.clone();
        final var message = java.lang.foreign.MemorySegment.ofArray(good);
        dev.tern.core.memory.BigEndian.u16(message, 36, dev.tern.core.checksum.InternetChecksum.compute(message, 34, good.length - 34));
        OutputChecks.check(List.of(new CapturedFrame(0, good)));

        final AssertionError badChecksum = assertThrows(AssertionError.class, () -> OutputChecks.check(List.of(new CapturedFrame(0, reply))));
        assertTrue(badChecksum.getMessage().contains("ICMP checksum"), badChecksum.getMessage());

        final byte[] quoted = Frames.ipv4(FuzzStack.PEER_IP, FuzzStack.IP, 1, 9, 0, 64, Frames.icmp(3, 3, 0, new byte[28]));
        final byte[] errorAboutError = Frames.ethernet(FuzzStack.PEER_MAC, FuzzStack.MAC, 0x0800,
            Frames.ipv4(FuzzStack.IP, FuzzStack.PEER_IP, 1, 10, 0, 64, Frames.icmp(3, 2, 0, quoted)));
        final AssertionError aboutError = assertThrows(AssertionError.class,
            () -> OutputChecks.check(List.of(new CapturedFrame(0, errorAboutError))));
        assertTrue(aboutError.getMessage().contains("never an error about an ICMP error"), aboutError.getMessage());

        final byte[] foreign = Frames.echoRequestFrame(FuzzStack.PEER_MAC, FuzzStack.MAC, FuzzStack.PEER_IP + 5, FuzzStack.PEER_IP, 1, 1,
            new byte[8]);
        final AssertionError notOurs = assertThrows(AssertionError.class, () -> OutputChecks.check(List.of(new CapturedFrame(0, foreign))));
        assertTrue(notOurs.getMessage().contains("from our address"), notOurs.getMessage());
    }

    @Test
    void aStackThatKnowsThePeerAnswersAtOnceSoTheOracleSeesTheAnswer() {
        final byte[] echo = Frames.echoRequestFrame(FuzzStack.MAC, FuzzStack.PEER_MAC, FuzzStack.PEER_IP, FuzzStack.IP, 7, 1,
            Frames.pattern(3000, 1));
        final List<CapturedFrame> sent = FuzzStack.runWithPeerKnown(List.of(new FuzzStack.Frame(0, 0, echo)));
        assertEquals(1, sent.stream().filter(f -> f.icmpType() == 0).count(), "one echo reply, in 3 fragments: " + sent);
        assertEquals(3, sent.stream().filter(f -> f.isIpv4() && f.ipProtocol() == 1).count());
        assertEquals(List.of(), FuzzStack.run(List.of(new FuzzStack.Frame(0, 0, echo))).stream()
            .filter(CapturedFrame::isIpv4).toList(), "without ARP the reply never leaves");
    }

    @Test
    void theUdpApplicationEchoesADatagramToPort7AndThePortUnreachableAnswersPort9() {
        final byte[] datagram = new byte[8 + 100];
        final java.lang.foreign.MemorySegment s = java.lang.foreign.MemorySegment.ofArray(datagram);
        dev.tern.core.memory.BigEndian.u16(s, 0, 5555);
        dev.tern.core.memory.BigEndian.u16(s, 2, 7);
        final byte[] closed = datagram.clone();
        dev.tern.core.memory.BigEndian.u16(java.lang.foreign.MemorySegment.ofArray(closed), 2, 9);
        final List<CapturedFrame> sent = FuzzStack.runWithPeerKnown(StackFuzzTest.frames(FuzzInput.encode(List.of(
            new FuzzInput.Record(1, datagram), new FuzzInput.Record(1, closed))), (record, index) -> {
                final byte[] copy = record.bytes().clone();
                StackFuzzTest.fixTransportChecksum(copy, 17, FuzzStack.PEER_IP, FuzzStack.IP);
                return Frames.ethernet(FuzzStack.MAC, FuzzStack.PEER_MAC, 0x0800, Frames.ipv4(FuzzStack.PEER_IP, FuzzStack.IP, 17,
                    index, 0, 64, copy));
            }), StackFuzzTest.UDP_APPLICATION);
        assertEquals(1, sent.stream().filter(f -> f.ipProtocol() == 17).count(), "one echo: " + sent);
        assertEquals(1, sent.stream().filter(f -> f.icmpType() == 3).count(), "one port unreachable");
        assertEquals(2, sent.stream().filter(f -> f.ipProtocol() == 2).count(), "the join of 239.1.2.3, reported twice");
    }

    @Test
    void theEstablishedHarnessMakesAConnectionAndTernSendsItsData() {
        final List<CapturedFrame> sent = FuzzStack.runWithPeerKnown(StackFuzzTest.establishingFrames(),
            StackFuzzTest.ESTABLISHED_APPLICATION);
        final List<CapturedFrame> tcp = sent.stream().filter(f -> f.ipProtocol() == 6).toList();
        assertTrue(tcp.size() >= 3, "a SYN-ACK and data: " + tcp);
        assertEquals(0x12, tcp.getFirst().u8(14 + 20 + 13), "SYN-ACK");
        assertEquals(FuzzStack.TCP_KEYS.isn(), tcp.getFirst().i32(14 + 20 + 4) & 0xFFFF_FFFFL, "Tern's fixed ISN");
        final int data = tcp.stream().filter(f -> f.u8(14 + 20 + 13) != 0x12)
            .mapToInt(f -> f.u16(14 + 2) - 20 - (f.u8(14 + 20 + 12) >>> 4) * 4).max().orElse(0);
        assertTrue(data > 0, "the application's 3000 bytes go out: " + tcp);
    }

    /**
     * The seed made from the kernel's side of {@code tcp-kernel-client.pcap} is a whole connection to the listener
     * harness: the fuzz stack's fixed ISN is the recording's, so the kernel's ACKs fit and nothing is reset.
     */
    @Test
    void theKernelsRecordedConnectionPlaysThroughTheListenerHarnessWithoutAReset() throws Exception {
        final byte[] seed = java.nio.file.Files.readAllBytes(java.nio.file.Path.of(java.util.Objects.requireNonNull(
            FuzzHarnessTest.class.getResource("StackFuzzTestInputs/tcpSegments/seed-tcp-kernel-client-sequence")).toURI()));
        final List<CapturedFrame> tcp = FuzzStack.runWithPeerKnown(StackFuzzTest.frames(seed, (record, index) -> {
            final byte[] segment = record.bytes().clone();
            dev.tern.core.memory.BigEndian.u16(java.lang.foreign.MemorySegment.ofArray(segment), 2, StackFuzzTest.TCP_PORT);
            StackFuzzTest.fixTransportChecksum(segment, 6, FuzzStack.PEER_IP, FuzzStack.IP);
            return Frames.ethernet(FuzzStack.MAC, FuzzStack.PEER_MAC, 0x0800, Frames.ipv4(FuzzStack.PEER_IP, FuzzStack.IP, 6,
                index, 0x4000, 64, segment));
        }), StackFuzzTest.TCP_APPLICATION).stream().filter(f -> f.ipProtocol() == 6).toList();
        assertTrue(tcp.stream().anyMatch(f -> f.u8(14 + 20 + 13) == 0x12), "a SYN-ACK: " + tcp);
        assertTrue(tcp.stream().noneMatch(f -> (f.u8(14 + 20 + 13) & 0x04) != 0), "no reset: " + tcp);
        final long kernelIsn = dev.tern.core.memory.BigEndian.i32(java.lang.foreign.MemorySegment.ofArray(
            FuzzInput.parse(seed).records().getFirst().bytes()), 4) & 0xFFFF_FFFFL;
        assertEquals((kernelIsn + 1 + 4000 + 1) & 0xFFFF_FFFFL, tcp.getLast().i32(14 + 20 + 8) & 0xFFFF_FFFFL,
            "the 4000 bytes and the FIN acknowledged");
    }

    @Test
    void theKernelsPingOfTheFuzzStackGetsItsReplyOnceTheStackHasResolvedThePeer() {
        final byte[] arp = Frames.ethernet(dev.tern.ethernet.wire.MacAddress.BROADCAST, FuzzStack.PEER_MAC, 0x0806,
            Frames.arp(1, FuzzStack.PEER_MAC, FuzzStack.PEER_IP, 0, FuzzStack.IP));
        final byte[] echo = Frames.echoRequestFrame(FuzzStack.MAC, FuzzStack.PEER_MAC, FuzzStack.PEER_IP, FuzzStack.IP, 7, 1,
            Frames.pattern(56, 1));
        final List<CapturedFrame> sent = FuzzStack.run(List.of(new FuzzStack.Frame(0, 0, arp), new FuzzStack.Frame(1_000_000, 0, echo)));
        assertTrue(sent.stream().anyMatch(f -> f.arpOperation() == 2), "an ARP reply");
        assertEquals(1, sent.stream().filter(f -> f.icmpType() == 0).count(), "one echo reply");
    }
}
