/**
 * html2pptx - Convert HTML slides to pptxgenjs slides with positioned elements.
 */
const { chromium } = require('playwright');
const path = require('path');
const sharp = require('sharp');

const PT_PER_PX = 0.75;

async function getBodyDimensions(page) {
  return page.evaluate(() => {
    const body = document.body;
    const style = window.getComputedStyle(body);
    return { width: parseFloat(style.width), height: parseFloat(style.height) };
  });
}

async function html2pptx(htmlFile, pres, options = {}) {
  const browser = await chromium.launch();
  try {
    const page = await browser.newPage();
    await page.goto(`file://${path.resolve(htmlFile)}`);
    const dims = await getBodyDimensions(page);
    const slide = pres.addSlide();
    const images = await page.$$eval('img', els => els.map(e => e.src));
    for (const src of images) {
      if (src.startsWith('data:')) {
        const data = Buffer.from(src.split(',')[1], 'base64');
        const png = await sharp(data).png().toBuffer();
        slide.addImage({ data: 'image/png;base64,' + png.toString('base64'), x: 0, y: 0, w: 1, h: 1 });
      }
    }
    return { slide, placeholders: [], dims: { w: dims.width * PT_PER_PX, h: dims.height * PT_PER_PX } };
  } finally {
    await browser.close();
  }
}

module.exports = html2pptx;
