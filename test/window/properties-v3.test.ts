import { describeProperties } from './properties.case.js';

describeProperties('window-v3');
