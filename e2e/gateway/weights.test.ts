/** backendRefs weights and unusable backends. */
import { startGatewayFixture } from '../support/gateway';
import { weightCases } from './cases/weights';

weightCases(startGatewayFixture);
