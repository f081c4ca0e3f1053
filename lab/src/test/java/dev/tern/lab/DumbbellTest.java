package dev.tern.lab;

import dev.tern.lab.link.QueueLimit;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DumbbellTest {
    @Test
    void oneCubicFlowFillsTheLinkAndTheRunIsReproducible() {
        final ScenarioSpec spec = Specs.dumbbell("one", 20_000_000, 20 * Specs.MS, QueueLimit.ofBytes(100_000),
            DisciplineSpec.dropTail(), 0, 5 * Specs.S, Specs.bulk(1, "cubic", false));
        final ScenarioResult first = Dumbbell.run(spec, null);
        assertTrue(first.utilisation() > 0.85, "utilisation " + first.utilisation());
        final FlowResult flow = first.flows().getFirst();
        assertTrue(flow.rttP50Us() >= 20_000 && flow.rttP99Us() <= 20_000 + 100_000 * 8 / 20 + 2_000,
            "RTT between the base and base + a full queue: " + flow);
        final ScenarioResult second = Dumbbell.run(spec, null);
        assertEquals(first.fingerprint(), second.fingerprint());
        assertEquals(first.flows(), second.flows());
        final ScenarioSpec otherSeed = new ScenarioSpec("one", 2, spec.durationNs(), spec.rate(), spec.rateText(),
            spec.forwardDelayNs(), spec.reverseDelayNs(), spec.queue(), spec.discipline(), spec.loss(), spec.lossText(),
            spec.outages(), spec.flows());
        assertNotEquals(first.fingerprint(), Dumbbell.run(otherSeed, null).fingerprint(), "the seed reaches the stacks");
    }
}
