package io.quotagate.tenant;

import jakarta.servlet.http.HttpServletRequest;

import java.lang.reflect.Proxy;
import java.security.Principal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A request that answers what resolvers ask (headers, host, dispatched path, peer, principal, attributes). */
final class FakeRequest {
    private final Map<String, List<String>> headers = new HashMap<>();
    private final Map<String, Object> attributes = new HashMap<>();
    private String serverName = "localhost";
    private String servletPath = "";
    private String pathInfo = "/";
    private String remoteAddr = "127.0.0.1";
    private Principal principal;

    static FakeRequest request() {
        return new FakeRequest();
    }

    FakeRequest header(String name, String value) {
        headers.computeIfAbsent(name.toLowerCase(), k -> new ArrayList<>()).add(value);
        return this;
    }

    FakeRequest host(String name) {
        serverName = name;
        return this;
    }

    /** The path the container dispatched, inside the context: servlet path and path info (may be null). */
    FakeRequest path(String servletPath, String pathInfo) {
        this.servletPath = servletPath;
        this.pathInfo = pathInfo;
        return this;
    }

    FakeRequest remote(String addr) {
        remoteAddr = addr;
        return this;
    }

    FakeRequest principal(String name) {
        principal = () -> name;
        return this;
    }

    FakeRequest attribute(String name, Object value) {
        attributes.put(name, value);
        return this;
    }

    HttpServletRequest build() {
        return (HttpServletRequest) Proxy.newProxyInstance(FakeRequest.class.getClassLoader(),
                new Class<?>[]{HttpServletRequest.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "getHeader" -> {
                        List<String> v = headers.get(((String) args[0]).toLowerCase());
                        yield v == null ? null : v.get(0);
                    }
                    case "getHeaders" -> Collections.enumeration(headers.getOrDefault(((String) args[0]).toLowerCase(), List.of()));
                    case "getServerName" -> serverName;
                    case "getServletPath" -> servletPath;
                    case "getPathInfo" -> pathInfo;
                    case "getRemoteAddr" -> remoteAddr;
                    case "getUserPrincipal" -> principal;
                    case "getAttribute" -> attributes.get((String) args[0]);
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }
}
