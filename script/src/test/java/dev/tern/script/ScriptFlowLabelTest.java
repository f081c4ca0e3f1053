package dev.tern.script;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** A flow's map from the flow labels a script names to Tern's, as packetdrill's verify_outbound_live_ipv6_flowlabel. */
class ScriptFlowLabelTest {
    private final ScriptFlow flow = new ScriptFlow(8080, 48000, 0);

    @Test
    void theFirstNameTakesTernsLabelAndTheSameNameMustKeepIt() {
        assertNull(flow.flowLabelMismatch(0x1, 0xabcde));
        assertNull(flow.flowLabelMismatch(0x1, 0xabcde));
        assertEquals("flow label 0x12345, not the 0xabcde that flowlabel 0x1 stood for before",
            flow.flowLabelMismatch(0x1, 0x12345));
    }

    @Test
    void anotherNameMustBeAnotherLabelAndThenStandsForIt() {
        assertNull(flow.flowLabelMismatch(0x1, 0xabcde));
        assertEquals("the same flow label 0xabcde as before, where the line's flowlabel 0x2 asks for another than "
            + "flowlabel 0x1's", flow.flowLabelMismatch(0x2, 0xabcde));
        assertNull(flow.flowLabelMismatch(0x2, 0x12345));
        assertNull(flow.flowLabelMismatch(0x2, 0x12345));
    }

    @Test
    void noNameChecksNothingAndALabelOf0IsNone() {
        assertNull(flow.flowLabelMismatch(0, 0));
        assertEquals("no flow label (0), where the line has flowlabel 0x1", flow.flowLabelMismatch(0x1, 0));
    }

    @Test
    void aNewConnectionOnTheFlowLearnsItsLabelAgain() {
        assertNull(flow.flowLabelMismatch(0x1, 0xabcde));
        flow.ternConnects();
        assertNull(flow.flowLabelMismatch(0x1, 0x12345));
        flow.restart();
        assertNull(flow.flowLabelMismatch(0x1, 0x54321));
    }
}
