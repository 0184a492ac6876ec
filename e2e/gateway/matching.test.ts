/**
 * HTTPRoute matching through the real controller CLI and a real nginx: every path type,
 * header / query / method conditions, ANY of the matches and ALL of a match's conditions,
 * precedence across rules and routes, and 404 when nothing matches.
 */
import { startGatewayFixture } from '../support/gateway';
import { matchingCases } from './cases/matching';

matchingCases(startGatewayFixture);
