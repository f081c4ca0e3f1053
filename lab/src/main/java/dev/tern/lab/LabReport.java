package dev.tern.lab;

import java.util.List;
import java.util.Locale;

/** The results of lab runs as text for people, CSV or JSON for scripts. Cold path. */
public final class LabReport {
    private LabReport() {
    }

    public static String text(ScenarioSpec spec, ScenarioResult r) {
        final StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "scenario %s: %s, delay %s + %s, queue %s %s, loss %s, %d flows, %.0f s"
                + " (%.1f s wall)%n", r.name(), spec.rateText(), ms(spec.forwardDelayNs()), ms(spec.reverseDelayNs()),
            spec.queue(), spec.discipline(), spec.lossText(), r.flows().size(), r.simulatedSeconds(), r.wallSeconds()));
        for (FlowResult f : r.flows()) {
            out.append(String.format(Locale.ROOT, "  flow %-3d %-8s goodput %8.3f Mbit/s  share %.3f  retrans %6d  ce %6d"
                    + "  rtt p50/95/99 %.1f/%.1f/%.1f ms%n", f.index(), f.congestionControl(), f.goodputBps() / 1e6,
                f.share(), f.retransmits(), f.ceMarks(), f.rttP50Us() / 1e3, f.rttP95Us() / 1e3, f.rttP99Us() / 1e3));
        }
        if (r.udp() != null) {
            out.append(String.format(Locale.ROOT, "  udp          offered %8.3f Mbit/s  delivered %8.3f Mbit/s"
                + "  frames %d of %d  ce %6d%n", r.udp().offeredBps() / 1e6, r.udp().deliveredBps() / 1e6,
                r.udp().deliveredFrames(), r.udp().sentFrames(), r.udp().ceMarks()));
        }
        out.append(String.format(Locale.ROOT, "  utilisation %.3f  jain %.3f  queue delay p50/95/99 %.1f/%.1f/%.1f ms%n",
            r.utilisation(), r.jainIndex(), r.queueP50Us() / 1e3, r.queueP95Us() / 1e3, r.queueP99Us() / 1e3));
        out.append(String.format(Locale.ROOT, "  drops: random %d, overflow %d, aqm %d, no buffer %d; marks: aqm %d,"
            + " threshold %d%n", r.randomLoss(), r.overflowDrops(), r.aqmDrops(), r.noBuffer(), r.aqmMarks(),
            r.thresholdMarks()));
        out.append("fingerprint ").append(r.name()).append(' ').append(r.fingerprint()).append('\n');
        return out.toString();
    }

    public static final String CSV_HEADER = "scenario,seed,flow,cc,bytes,goodput_bps,share,retransmits,ce_marks,"
        + "rtt_p50_us,rtt_p95_us,rtt_p99_us,utilisation,jain,queue_p50_us,queue_p95_us,queue_p99_us,random_loss,"
        + "overflow_drops,aqm_drops,aqm_marks,threshold_marks,udp_offered_bps,udp_delivered_bps,fingerprint";

    /** One CSV row per flow; the scenario's columns repeat on each. */
    public static String csv(ScenarioResult r) {
        final StringBuilder out = new StringBuilder();
        for (FlowResult f : r.flows()) {
            out.append(String.format(Locale.ROOT, "%s,%d,%d,%s,%d,%.0f,%.4f,%d,%d,%d,%d,%d,%.4f,%.4f,%d,%d,%d,%d,%d,%d,%d,%d,"
                    + "%.0f,%.0f,%s%n",
                r.name(), r.seed(), f.index(), f.congestionControl(), f.bytes(), f.goodputBps(), f.share(),
                f.retransmits(), f.ceMarks(), f.rttP50Us(), f.rttP95Us(), f.rttP99Us(), r.utilisation(), r.jainIndex(),
                r.queueP50Us(), r.queueP95Us(), r.queueP99Us(), r.randomLoss(), r.overflowDrops(), r.aqmDrops(),
                r.aqmMarks(), r.thresholdMarks(), r.udp() == null ? 0 : r.udp().offeredBps(),
                r.udp() == null ? 0 : r.udp().deliveredBps(), r.fingerprint()));
        }
        return out.toString();
    }

    /** A JSON array of scenario objects, each with its flows. */
    public static String json(List<ScenarioResult> results) {
        final StringBuilder out = new StringBuilder("[\n");
        for (int i = 0; i < results.size(); i++) {
            final ScenarioResult r = results.get(i);
            out.append(String.format(Locale.ROOT, "  {\"scenario\": \"%s\", \"seed\": %d, \"fingerprint\": \"%s\","
                    + " \"utilisation\": %.4f, \"jain\": %.4f, \"queue_delay_us\": {\"p50\": %d, \"p95\": %d, \"p99\": %d},"
                    + " \"drops\": {\"random\": %d, \"overflow\": %d, \"aqm\": %d, \"no_buffer\": %d},"
                    + " \"marks\": {\"aqm\": %d, \"threshold\": %d}, \"udp\": %s, \"flows\": [", escape(r.name()), r.seed(),
                r.fingerprint(), r.utilisation(), r.jainIndex(), r.queueP50Us(), r.queueP95Us(), r.queueP99Us(),
                r.randomLoss(), r.overflowDrops(), r.aqmDrops(), r.noBuffer(), r.aqmMarks(), r.thresholdMarks(),
                udpJson(r.udp())));
            for (int k = 0; k < r.flows().size(); k++) {
                final FlowResult f = r.flows().get(k);
                out.append(String.format(Locale.ROOT, "%s{\"flow\": %d, \"cc\": \"%s\", \"bytes\": %d, \"goodput_bps\": %.0f,"
                        + " \"share\": %.4f, \"retransmits\": %d, \"ce_marks\": %d, \"rtt_us\": {\"p50\": %d, \"p95\": %d,"
                        + " \"p99\": %d}}", k == 0 ? "" : ", ", f.index(), escape(f.congestionControl()), f.bytes(),
                    f.goodputBps(), f.share(), f.retransmits(), f.ceMarks(), f.rttP50Us(), f.rttP95Us(), f.rttP99Us()));
            }
            out.append("]}").append(i + 1 < results.size() ? ",\n" : "\n");
        }
        return out.append("]\n").toString();
    }

    private static String udpJson(UdpResult udp) {
        return udp == null ? "null" : String.format(Locale.ROOT, "{\"sent_frames\": %d, \"delivered_frames\": %d,"
            + " \"offered_bps\": %.0f, \"delivered_bps\": %.0f, \"ce_marks\": %d}", udp.sentFrames(),
            udp.deliveredFrames(), udp.offeredBps(), udp.deliveredBps(), udp.ceMarks());
    }

    private static String ms(long ns) {
        return String.format(Locale.ROOT, "%.1f ms", ns / 1e6);
    }

    private static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"");
    }
}
