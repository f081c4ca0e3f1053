package dev.tern.rawqp;

import dev.tern.rawqp.mlx5.Mlx5Cqe64;
import dev.tern.rawqp.mlx5.Mlx5SendWqe;
import dev.tern.rawqp.testing.CPrograms;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The Java encoders and decoders byte for byte against the header's own code: a gcc-built helper
 * ({@code src/test/resources/c/mlx5_vectors.c}) builds WQEs with {@code mlx5dv_set_ctrl_seg},
 * {@code mlx5dv_set_eth_seg} and {@code mlx5dv_set_data_seg}, CQEs with the {@code struct mlx5_cqe64} fields
 * (decoded with {@code mlx5dv_get_cqe_owner/opcode/format}), and flow rules with the {@code ibv_flow_*} structs. These
 * are static inlines and plain structs, so they run without RDMA hardware.
 */
class HeaderInlineVectorsTest {
    private static final long SEED = 0x7E2_4A11L;
    private static final HexFormat HEX = HexFormat.of();
    private static final int WQE_CASES = 400;
    private static final int CQE_CASES = 300;
    private static Path helper;

    @BeforeAll
    static void buildHelper() throws IOException {
        CPrograms.requireToolchain();
        try (InputStream source = HeaderInlineVectorsTest.class.getResourceAsStream("/c/mlx5_vectors.c")) {
            helper = CPrograms.compile("mlx5_vectors", new String(source.readAllBytes(), StandardCharsets.UTF_8));
        }
    }

    /** One send WQE's inputs. */
    record WqeCase(int pi, int opcode, int qpn, int fmCeSe, int csFlags, int mss, byte[] inline, int dataLength, int lkey, long address) {
        String request() {
            return "wqe " + (pi & 0xFFFF) + " " + opcode + " " + qpn + " " + fmCeSe + " " + csFlags + " " + mss + " " + HEX.formatHex(inline) + " "
                + dataLength + " " + Integer.toUnsignedString(lkey) + " " + Long.toUnsignedString(address);
        }
    }

    private static List<WqeCase> wqeCases() {
        final Random random = new Random(SEED);
        final List<WqeCase> cases = new ArrayList<>();
        final int[] edgeIndexes = {0, 1, 0x7FFF, 0xFFFE, 0xFFFF, 0x1_0000, 0x1_FFFF, -1};
        for (int i = 0; i < WQE_CASES; i++) {
            final boolean tso = random.nextInt(4) == 0;
            final int inlineLength = tso ? 34 + random.nextInt(Mlx5Link.MAX_TSO_HEADER - 34 + 1) : Mlx5SendWqe.MIN_INLINE_HEADER_SIZE;
            final byte[] inline = new byte[inlineLength];
            random.nextBytes(inline);
            final int pi = i < edgeIndexes.length ? edgeIndexes[i] : random.nextInt();
            cases.add(new WqeCase(pi, tso ? Mlx5SendWqe.OPCODE_TSO : Mlx5SendWqe.OPCODE_SEND, random.nextInt(1 << 24),
                random.nextBoolean() ? Mlx5SendWqe.CTRL_CQ_UPDATE : 0, random.nextInt(4) << 6, tso ? 1 + random.nextInt(9000) : 0, inline,
                random.nextInt(10) == 0 ? 0 : 1 + random.nextInt(65536), random.nextInt(), random.nextLong()));
        }
        return cases;
    }

    /** Builds the WQE with the Java encoder at {@code start} of a queue pre-filled with 0xA5; returns its bytes in WQE order. */
    private static byte[] javaWqe(WqeCase c, MemorySegment queue, long start) {
        queue.fill((byte) 0xA5);
        final MemorySegment frame = MemorySegment.ofArray(c.inline());
        final int ds = Mlx5SendWqe.ds(c.inline().length, c.dataLength() > 0 ? 1 : 0);
        final Mlx5SendWqe wqe = new Mlx5SendWqe().wrap(queue, start);
        wqe.control(c.pi(), c.opcode(), c.qpn(), ds, c.fmCeSe());
        final int ethDs = wqe.ethernet(c.csFlags(), c.mss(), frame, 0, c.inline().length);
        if (c.dataLength() > 0) {
            wqe.data(Mlx5SendWqe.ETH_DS + ethDs, c.dataLength(), c.lkey(), c.address());
        }
        final byte[] bytes = new byte[ds * Mlx5SendWqe.DS_SIZE];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = queue.get(ValueLayout.JAVA_BYTE, (start + i) % queue.byteSize());
        }
        return bytes;
    }

    private static List<String> runHelper(List<String> requests) {
        final List<String> lines = CPrograms.run(helper, String.join("\n", requests) + "\n").lines().toList();
        assertEquals(requests.size(), lines.size(), "one answer per request");
        return lines;
    }

    @Test
    void sendWqesMatchTheHeaderInlinesByteForByteAtEveryQueuePositionIncludingTheWrap() {
        final List<WqeCase> cases = wqeCases();
        final List<String> answers = runHelper(cases.stream().map(WqeCase::request).toList());
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment queue = arena.allocate(1024, 64);
            for (int i = 0; i < cases.size(); i++) {
                final WqeCase c = cases.get(i);
                final String[] answer = answers.get(i).split(" ");
                final int ds = Mlx5SendWqe.ds(c.inline().length, c.dataLength() > 0 ? 1 : 0);
                assertEquals(Integer.parseInt(answer[0]), ds, "ds of case " + i + ": " + c.request());
                // Start anywhere, including the last basic block, so multi-block WQEs wrap to the queue's start.
                final long start = (long) (i % 16) * Mlx5SendWqe.BASIC_BLOCK_SIZE;
                assertEquals(answer[1], HEX.formatHex(javaWqe(c, queue, start)), "case " + i + " at " + start + ": " + c.request());
            }
        }
    }

    @Test
    void cqeFieldsDecodeAsTheHeaderDefinesThemAndTheWritersProduceTheSameBytes() {
        final Random random = new Random(SEED + 1);
        final List<int[]> cases = new ArrayList<>();
        final List<String> requests = new ArrayList<>();
        for (int i = 0; i < CQE_CASES; i++) {
            final boolean writerCase = i % 2 == 0;
            // The writers produce plain CQEs: format 0, not solicited; decoding is checked on any op_own.
            final int[] c = {writerCase ? random.nextInt(256) & 0xF1 : random.nextInt(256), random.nextInt(), random.nextInt(65536), random.nextInt(8),
                writerCase ? random.nextInt(4) << 2 : random.nextInt(256), random.nextInt(256), random.nextInt(256)};
            cases.add(c);
            requests.add("cqe " + c[0] + " " + Integer.toUnsignedString(c[1]) + " " + c[2] + " " + c[3] + " " + c[4] + " " + c[5] + " " + c[6]);
        }
        final List<String> answers = runHelper(requests);
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment entry = arena.allocate(Mlx5Cqe64.SIZE, 64);
            final Mlx5Cqe64 cqe = new Mlx5Cqe64().wrap(entry, 0);
            for (int i = 0; i < cases.size(); i++) {
                final int[] c = cases.get(i);
                final String[] answer = answers.get(i).split(" ");
                MemorySegment.copy(MemorySegment.ofArray(HEX.parseHex(answer[0])), 0, entry, 0, Mlx5Cqe64.SIZE);
                final String context = "case " + i + ": " + requests.get(i);
                assertEquals(Integer.parseInt(answer[1]), cqe.owner(), context);
                assertEquals(Integer.parseInt(answer[2]), cqe.opcode(), context);
                assertEquals(Integer.parseInt(answer[3]), cqe.format(), context);
                assertEquals(c[1], cqe.byteCount(), context);
                assertEquals(c[2], cqe.wqeCounter(), context);
                assertEquals(c[2], cqe.errorWqeCounter(), context);
                assertEquals(c[3], cqe.hdsIpExt(), context);
                assertEquals(c[4] >>> 2 & 3, cqe.l3HeaderType(), context);
                assertEquals(c[5], cqe.syndrome(), context);
                assertEquals(c[6], cqe.vendorSyndrome(), context);
                assertEquals((c[3] & 6) == 6 && (c[4] >>> 2 & 3) == Mlx5Cqe64.L3_HDR_TYPE_IPV4, cqe.ipv4ChecksumsOk(), context);
                if (i % 2 == 0) {
                    entry.fill((byte) 0xA5);
                    cqe.clearBody().byteCount(c[1]).wqeCounter(c[2]).checksumStatus(c[3], c[4] >>> 2).syndrome(c[5], c[6]).opOwn(c[0] >>> 4, c[0]);
                    assertEquals(answer[0], HEX.formatHex(entry.toArray(ValueLayout.JAVA_BYTE)), "writers, " + context);
                }
            }
        }
    }

    @Test
    void flowRulesEncodeAsTheVerbsStructsLaidOutByGcc() {
        final Random random = new Random(SEED + 2);
        final List<FlowRule> rules = new ArrayList<>();
        final List<Integer> ports = new ArrayList<>();
        final List<String> requests = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            final long mac = random.nextLong() & 0xFEFF_FFFF_FFFFL;
            final int ip = random.nextInt() | 1;
            final int port = random.nextInt(65536);
            final boolean tcp = random.nextBoolean();
            final int ibvPort = 1 + random.nextInt(2);
            rules.add(tcp ? FlowRule.tcp(mac, ip, port) : FlowRule.udp(mac, ip, port));
            ports.add(ibvPort);
            requests.add(String.format("flow %012x %08x %d %d %d", mac, ip, port, tcp ? 1 : 0, ibvPort));
        }
        final List<String> answers = runHelper(requests);
        try (Arena arena = Arena.ofConfined()) {
            for (int i = 0; i < rules.size(); i++) {
                final MemorySegment encoded = rules.get(i).encode(arena, ports.get(i));
                assertEquals(100, encoded.byteSize());
                assertEquals(answers.get(i), HEX.formatHex(encoded.toArray(ValueLayout.JAVA_BYTE)), requests.get(i));
            }
        }
    }

    /** IPv6 rules (eth and ipv6 specs), trapping or not, byte for byte as gcc lays out the structs. */
    @Test
    void ipv6FlowRulesEncodeAsTheVerbsStructsLaidOutByGcc() {
        final Random random = new Random(SEED + 3);
        final List<FlowRule> rules = new ArrayList<>();
        final List<String> requests = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            final long mac = random.nextLong() & 0xFEFF_FFFF_FFFFL;
            final long high = random.nextLong() | 1;
            final long low = random.nextLong();
            final boolean dontTrap = random.nextBoolean();
            final FlowRule rule = FlowRule.ipv6(mac, high, low);
            rules.add(dontTrap ? rule.withoutTrapping() : rule);
            requests.add(String.format("flow6 %012x %016x%016x %d 1", mac, high, low, dontTrap ? 1 : 0));
        }
        final List<String> answers = runHelper(requests);
        try (Arena arena = Arena.ofConfined()) {
            for (int i = 0; i < rules.size(); i++) {
                final MemorySegment encoded = rules.get(i).encode(arena, 1);
                assertEquals(148, encoded.byteSize());
                assertEquals(answers.get(i), HEX.formatHex(encoded.toArray(ValueLayout.JAVA_BYTE)), requests.get(i));
            }
        }
    }
}
