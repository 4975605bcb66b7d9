package io.quotagate.containers;

import io.quotagate.filter.QuotaFilter;
import io.undertow.Undertow;
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
                .addFilter(Servlets.filter("quota", QuotaFilter.class)
                        .addInitParam(QuotaFilter.PLANS_PARAM, TestApp.PLANS)
                        .setAsyncSupported(true))
                .addFilterUrlMapping("quota", "/*", DispatcherType.REQUEST)
                .addServlets(
                        Servlets.servlet("ok", TestApp.OkServlet.class).addMappings("/items/*", "/health"),
                        Servlets.servlet("paced", TestApp.OkServlet.class).addMapping("/paced/*").setAsyncSupported(true),
                        Servlets.servlet("reports", TestApp.ReportServlet.class)
                                .addMapping("/reports/*")
                                .setAsyncSupported(true));
        manager = Servlets.defaultContainer().addDeployment(deployment);
        manager.deploy();
        server = Undertow.builder()
                .addHttpListener(0, "127.0.0.1")
                .setHandler(manager.start())
                .build();
        server.start();
        return ((InetSocketAddress) server.getListenerInfo().get(0).getAddress()).getPort();
    }

    @Override
    protected void stop() throws Exception {
        server.stop();
        manager.stop();
        manager.undeploy();
    }
}
