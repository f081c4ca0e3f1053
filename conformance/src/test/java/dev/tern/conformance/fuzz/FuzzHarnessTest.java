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
