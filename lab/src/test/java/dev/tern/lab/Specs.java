package dev.tern.lab;

import dev.tern.lab.link.LinkRate;
import dev.tern.lab.link.LossModel;
import dev.tern.lab.link.Outages;
import dev.tern.lab.link.QueueLimit;

import java.util.ArrayList;
import java.util.List;

/** Scenarios built in code for the tests. */
final class Specs {
    static final long MS = 1_000_000L;
    static final long S = 1_000_000_000L;

    private Specs() {
    }

    static ScenarioSpec dumbbell(String name, long bps, long rttNs, QueueLimit queue, DisciplineSpec discipline,
                                 double loss, long durationNs, List<FlowSpec> flows) {
        return new ScenarioSpec(name, 1, durationNs, () -> LinkRate.constant(bps), bps + " bit/s", rttNs / 2,
            rttNs / 2, queue, discipline, () -> loss > 0 ? LossModel.bernoulli(loss, 11) : LossModel.none(),
            "bernoulli " + loss, Outages::none, flows);
    }

    /** {@code spec} with UDP cross traffic beside its flows. */
    static ScenarioSpec withUdp(ScenarioSpec spec, List<UdpSpec> udp) {
        return new ScenarioSpec(spec.name(), spec.seed(), spec.durationNs(), spec.rate(), spec.rateText(),
            spec.forwardDelayNs(), spec.reverseDelayNs(), spec.queue(), spec.discipline(), spec.loss(), spec.lossText(),
            spec.outages(), spec.flows(), udp);
    }

    static List<FlowSpec> bulk(int count, String cc, boolean ecn) {
        final List<FlowSpec> flows = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            flows.add(new FlowSpec(cc, ecn, 0, 0, 0, 0));
        }
        return flows;
    }
}
