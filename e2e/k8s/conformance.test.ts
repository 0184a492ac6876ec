/**
 * The Gateway API HTTPRoute cases the standalone e2e suite runs (e2e/gateway/cases/), run again
 * through the Kubernetes provider: the same manifests applied with kubectl to a real API
 * server, the controller reading them with list + watch, backends in a network namespace.
 * Each group starts its own API server (about 10 s).
 */
import { describeKube, startKubeGatewayFixture } from '../support/kube-gateway';
import { matchingCases } from '../gateway/cases/matching';
import { hostnameCases } from '../gateway/cases/hostnames';
import { weightCases } from '../gateway/cases/weights';
import { backendFilterCases } from '../gateway/cases/backend-filters';

jest.setTimeout(60000);

describeKube('through Kubernetes: HTTPRoute matching', () => matchingCases(startKubeGatewayFixture, 240000));
describeKube('through Kubernetes: hostnames', () => hostnameCases(startKubeGatewayFixture, 240000));
describeKube('through Kubernetes: backend weights', () => weightCases(startKubeGatewayFixture, 240000));
describeKube('through Kubernetes: backendRef filters', () => backendFilterCases(startKubeGatewayFixture, 240000));
