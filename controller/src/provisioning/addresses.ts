/**
 * A Gateway's status.addresses from its provisioned Service (as NGINX Gateway Fabric does):
 * the load balancer's ingress IPs and hostnames once it has them, else the cluster IP(s).
 */
export interface GatewayStatusAddress {
  type: 'IPAddress' | 'Hostname';
  value: string;
}

export interface ServiceForAddresses {
  spec?: { type?: string; clusterIP?: string; clusterIPs?: string[] };
  status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } };
}

export function gatewayAddresses(service: ServiceForAddresses | undefined): GatewayStatusAddress[] {
  if (!service) return [];
  const out: GatewayStatusAddress[] = [];
  if (service.spec?.type === 'LoadBalancer') {
    for (const i of service.status?.loadBalancer?.ingress ?? []) {
      if (i.ip) out.push({ type: 'IPAddress', value: i.ip });
      else if (i.hostname) out.push({ type: 'Hostname', value: i.hostname });
    }
    if (out.length) return out;
  }
  const ips = service.spec?.clusterIPs?.length ? service.spec.clusterIPs : service.spec?.clusterIP ? [service.spec.clusterIP] : [];
  for (const ip of ips) if (ip && ip !== 'None') out.push({ type: 'IPAddress', value: ip });
  return out;
}
