/**
 * Network namespaces for tests that talk to a real Linux kernel: {@link dev.tern.testkit.netns.NetnsHarness} (two
 * namespaces joined by a veth pair, kernel peer on one side, Tern on the other), {@link
 * dev.tern.testkit.netns.NetworkNamespace} (create, exec, setns into, delete), {@link
 * dev.tern.testkit.netns.PacketLoss} and bounded external commands. Main code of the testkit module, built on core
 * alone: afpacket's tests use it at test scope, conformance's interop tests and its benchmarks (main code) at compile
 * scope. The JUnit side (skip, or fail under {@code TERN_REQUIRE_NETNS=1}) is {@code NetnsTesting} in the module's
 * test-jar.
 */
package dev.tern.testkit.netns;
