/**
 * Hostnames: listener hostname ∩ route hostnames (wildcards included), one nginx server per
 * hostname with a catch-all, and the more specific hostname winning.
 */
import { startGatewayFixture } from '../support/gateway';
import { hostnameCases } from './cases/hostnames';

hostnameCases(startGatewayFixture);
