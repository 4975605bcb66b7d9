package io.quotagate.containers;

import io.quotagate.filter.QuotaFilter;
import io.undertow.Undertow;
import io.undertow.UndertowOptions;
import io.undertow.servlet.Servlets;
import io.undertow.servlet.api.DeploymentInfo;
import io.undertow.servlet.api.DeploymentManager;
import jakarta.servlet.DispatcherType;

import java.net.InetSocketAddress;

/**
 * Undertow 2.3: registered with its own API, as the "Containers" paragraph of docs/installation.md shows. Undertow's
 * default for a filter is async off, which makes every async report a 500 (UT010026). Undertow passes
 * {@code /reports//1} and {@code /reports/./1} on; the filter normalises them and charges reports (429).
 */
class UndertowContainerTest extends ContainerBehaviourContract {
    private Undertow server;
    private DeploymentManager manager;

    @Override
    protected int start() throws Exception {
        DeploymentInfo deployment = Servlets.deployment()
                .setClassLoader(UndertowContainerTest.class.getClassLoader())
                .setContextPath("/")
                .setDeploymentName("container-tests")
                .addServletContextAttribute(QuotaFilter.METER_REGISTRY_ATTRIBUTE, TestApp.newMeters())
                .addFilter(Servlets.filter("quota", QuotaFilter.class)
                        .addInitParam(QuotaFilter.PLANS_PARAM, TestApp.PLANS)
                        .setAsyncSupported(true))
                .addFilter(Servlets.filter("front", TestApp.PassFilter.class)) // async off: Undertow's default
                .addFilterUrlMapping("front", "/front/*", DispatcherType.REQUEST)
                .addFilterUrlMapping("quota", "/*", DispatcherType.REQUEST)
                .addFilter(Servlets.filter("quota-estimated", QuotaFilter.class,
                                new io.undertow.servlet.util.ImmediateInstanceFactory<>(TestApp.estimatedFilter()))
                        .setAsyncSupported(true))
                .addFilterUrlMapping("quota-estimated", "/estimated/*", DispatcherType.REQUEST)
                .addServlets(
                        Servlets.servlet("ok", TestApp.OkServlet.class).addMappings("/items/*", "/health", "/front/*"),
                        Servlets.servlet("estimated", TestApp.OkServlet.class).addMapping("/estimated/*"),
                        Servlets.servlet("paced", TestApp.OkServlet.class).addMapping("/paced/*").setAsyncSupported(true),
                        Servlets.servlet("plain", TestApp.OkServlet.class).addMapping("/plain/*"),
                        Servlets.servlet("reports", TestApp.ReportServlet.class)
                                .addMappings("/reports/*", "/adaptive/*")
                                .setAsyncSupported(true));
        manager = Servlets.defaultContainer().addDeployment(configure(deployment));
        manager.deploy();
        server = Undertow.builder()
                .addHttpListener(0, "127.0.0.1")
                .setServerOption(UndertowOptions.ENABLE_HTTP2, true) // h2c by upgrade
                .setHandler(manager.start())
                .build();
        server.start();
        return ((InetSocketAddress) server.getListenerInfo().get(0).getAddress()).getPort();
    }

    /** What a leg changes on the deployment (the virtual-thread leg: the executor of servlet requests). */
    protected DeploymentInfo configure(DeploymentInfo deployment) {
        return deployment;
    }

    /**
     * Undertow 2.3 does not: a suspended request whose client reset its stream heard nothing within 20 s (measured
     * 2026-12-04), so its units stay reserved and it runs at its time, as an HTTP/1.1 client that leaves does on
     * every container (docs/throttling.md).
     */
    @Override
    protected boolean reportsStreamResets() {
        return false;
    }

    @Override
    protected void stop() throws Exception {
        server.stop();
        manager.stop();
        manager.undeploy();
    }
}
