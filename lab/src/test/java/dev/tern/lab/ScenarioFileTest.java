package dev.tern.lab;

import dev.tern.lab.link.LabInputException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ScenarioFileTest {
    private static final List<String> GOOD = List.of(
        "# a comment", "name = t", "seed = 3", "duration = 2s", "rate = 10mbit", "forward_delay = 5ms",
        "reverse_delay = 15ms", "queue = 50p", "discipline = codel", "ecn = on", "target = 2ms", "interval = 50ms",
        "loss = 1%", "outage = 1s 100ms", "", "[flow]", "cc = cubic", "count = 2", "access_delay = 3ms",
        "[flow]", "cc = bbr", "start = 500ms", "bytes = 64kib", "ecn = on");

    @Test
    void readsEveryKey() {
        final ScenarioSpec spec = ScenarioFile.parse("t.lab", null, GOOD);
        assertEquals("t", spec.name());
        assertEquals(3, spec.seed());
        assertEquals(2_000_000_000L, spec.durationNs());
        assertEquals(10_000_000, spec.rate().get().bitsPerSecond());
        assertEquals(5_000_000, spec.forwardDelayNs());
        assertEquals(15_000_000, spec.reverseDelayNs());
        assertEquals(50, spec.queue().packets());
        assertEquals(new DisciplineSpec("codel", 2_000_000, 50_000_000, true, null), spec.discipline());
        assertEquals(0.01, spec.loss().get().meanLoss(), 1e-12);
        assertEquals(1, spec.outages().get().count());
        assertEquals(List.of(new FlowSpec("cubic", false, 0, 0, 0, 3_000_000), new FlowSpec("cubic", false, 0, 0, 0,
            3_000_000), new FlowSpec("bbr", true, 500_000_000, 65536, 0, 0)), spec.flows());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "frob = 1|2|unknown key 'frob'",
        "rate = -5mbit|5|rate must not be negative, got -5mbit",
        "delay = -1ms|6|delay must not be negative, got -1ms",
        "queue = 1000b|8|queue 1000b is smaller than one frame (1514 bytes)",
        "discipline = red|9|unknown discipline 'red' (valid: droptail, codel",
        "cc = vegas|17|unknown congestion control 'vegas'",
        "loss = 2|13|loss must be between 0 and 1",
        "duration = 5 parsecs|4|duration: expected a duration such as 10s, 5ms or 250us, got '5 parsecs'",
        "[flows]|16|unknown section [flows]",
        "quantum = 300|10|quantum applies to fq_codel, not to codel",
        "tshift = 5ms|11|tshift applies to dualpi2, not to codel",
        "flows = 0|10|flows must be between 1 and 65536, got 0",
        "alpha = -1|10|alpha must be at least 0, got -1",
        "coupling = 0|10|coupling must be positive, got 0",
        "mark_probability = 20|10|mark_probability must be between 0 and 1",
        "classify = dscp|10|classify is ect1 or any_ect, got 'dscp'",
        "discipline = fq-codel|9|unknown discipline 'fq-codel' (valid: droptail, codel, fq_codel, pie, dualpi2)"})
    void aBadLineIsNamedByFileAndLine(String replacement, int lineNumber, String reason) {
        final List<String> lines = new ArrayList<>(GOOD);
        lines.set(lineNumber - 1, replacement);
        final LabInputException e = assertThrows(LabInputException.class, () -> ScenarioFile.parse("bad.lab", null, lines));
        assertTrue(e.getMessage().startsWith("bad.lab:" + lineNumber + ": " + reason), e.getMessage());
    }

    @Test
    void eachDisciplineTakesItsOwnKeysWithItsDefaults() {
        final ScenarioSpec fq = ScenarioFile.parse("f.lab", null, List.of("rate = 10mbit", "discipline = fq_codel",
            "ecn = on", "flows = 64", "quantum = 300", "[flow]", "cc = cubic"));
        assertEquals(5_000_000, fq.discipline().targetNs());
        assertEquals(64, fq.discipline().tuning().flows());
        assertEquals(300, fq.discipline().tuning().quantum());
        final ScenarioSpec pie = ScenarioFile.parse("p.lab", null, List.of("rate = 10mbit", "discipline = pie",
            "alpha = 0.25", "max_burst = 0ms", "mark_probability = 5%", "[flow]", "cc = cubic"));
        assertEquals(15_000_000, pie.discipline().targetNs());
        assertEquals(15_000_000, pie.discipline().tuning().updateNs());
        assertEquals(0.25, pie.discipline().tuning().alpha());
        assertEquals(1.25, pie.discipline().tuning().beta());
        assertEquals(0, pie.discipline().tuning().maxBurstNs());
        assertEquals(0.05, pie.discipline().tuning().markProbability(), 1e-12);
        final ScenarioSpec dual = ScenarioFile.parse("d.lab", null, List.of("rate = 10mbit", "discipline = dualpi2",
            "target = 20ms", "l4s_threshold = 1ms", "l4s_range = 0us", "classify = any_ect", "[flow]", "cc = dctcp"));
        final DisciplineSpec.Tuning t = dual.discipline().tuning();
        assertEquals(20_000_000, dual.discipline().targetNs());
        assertEquals(1_000_000, t.l4sThresholdNs());
        assertEquals(0, t.l4sRangeNs());
        assertEquals(40_000_000, t.tShiftNs(), "twice the target");
        assertEquals(2.0, t.coupling());
        assertTrue(t.anyEct());
        assertEquals("d.lab:2: ecn does not apply to dualpi2, which marks ECN-capable packets always",
            assertThrows(LabInputException.class, () -> ScenarioFile.parse("d.lab", null, List.of("rate = 10mbit",
                "ecn = on", "discipline = dualpi2", "[flow]", "cc = dctcp"))).getMessage());
    }

    @Test
    void udpSectionsAddCrossTraffic() {
        final ScenarioSpec spec = ScenarioFile.parse("u.lab", null, List.of("rate = 10mbit", "[udp]", "rate = 2mbit",
            "size = 1000b", "start = 1s", "ecn = ect1", "[flow]", "cc = cubic", "[udp]", "rate = 500kbit"));
        assertEquals(List.of(new UdpSpec(2_000_000, 1000, 1_000_000_000L, 0, 1), new UdpSpec(500_000, 1514, 0, 0, 0)),
            spec.udp());
        assertEquals(1, spec.flows().size());
        assertEquals("u.lab:2: [udp] needs rate =", assertThrows(LabInputException.class, () -> ScenarioFile.parse(
            "u.lab", null, List.of("rate = 10mbit", "[udp]", "size = 100b", "[flow]", "cc = cubic"))).getMessage());
        assertTrue(assertThrows(LabInputException.class, () -> ScenarioFile.parse("u.lab", null, List.of(
            "rate = 1mbit", "[udp]", "rate = 1mbit", "cc = cubic"))).getMessage().startsWith(
            "u.lab:4: unknown key 'cc' in [udp] (valid: duration, ecn, rate, size, start)"));
        assertEquals("u.lab:3: ecn in [udp] is not-ect, ect0 or ect1, got 'ce'", assertThrows(LabInputException.class,
            () -> ScenarioFile.parse("u.lab", null, List.of("rate = 1mbit", "[udp]", "ecn = ce"))).getMessage());
        assertEquals("u.lab:3: size must be between 42 and 1514, got 2000", assertThrows(LabInputException.class,
            () -> ScenarioFile.parse("u.lab", null, List.of("rate = 1mbit", "[udp]", "size = 2000"))).getMessage());
    }

    @Test
    void aScenarioWithoutRateOrFlowsIsRejected() {
        assertEquals("x.lab:2: no rate = or trace = for the bottleneck", assertThrows(LabInputException.class,
            () -> ScenarioFile.parse("x.lab", null, List.of("[flow]", "cc = cubic"))).getMessage());
        assertEquals("x.lab:1: no [flow] section", assertThrows(LabInputException.class,
            () -> ScenarioFile.parse("x.lab", null, List.of("rate = 1mbit"))).getMessage());
    }

    @Test
    void theShippedMatrixParsesAndCoversTheCanonicalCases() {
        final List<String> names = LabMatrix.shipped().stream().map(ScenarioSpec::name).toList();
        assertTrue(names.size() >= 8, names.toString());
        for (String wanted : List.of("coexistence-cubic-bbr", "coexistence-reno-cubic", "random-loss-1pct",
            "shallow-buffer", "bufferbloat", "ecn-codel", "ecn-dctcp-step", "many-flows", "rtt-fairness", "cellular",
            "ecn-fq-codel", "ecn-pie", "ecn-dualpi2", "l4s-dctcp-cubic")) {
            assertTrue(names.contains(wanted), wanted + " in " + names);
        }
    }
}
