/**
 * A runner for packetdrill-format scripts on virtual time: one Tern stack, the script playing the remote peer
 * (injecting TCP segments, UDP datagrams and ICMP errors with {@code <}, expecting Tern's with {@code >}) and the
 * application (socket calls). The syntax, the choices where packetdrill leaves room and what is rejected are in
 * docs/SCRIPTS.md.
 *
 * <p>It lives in {@code stack}, not in {@code conformance}, because {@code tern script} (cli) runs it and cli may not
 * depend on conformance (docs/DESIGN.md, "Guard rails"); conformance runs the corpus of scripts as unit tests.
 */
package dev.tern.stack.script;
